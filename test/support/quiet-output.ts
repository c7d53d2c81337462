import { openSync, writeSync } from "node:fs";
import { relative } from "node:path";
import { expect, inject } from "vitest";

/**
 * What the code under test writes straight to standard output and error (the service's JSON log
 * lines, with the stacks of the errors tests provoke on purpose; CDK's "Bundling asset" notes) is
 * kept in the run's output file, each chunk labelled with its test, and handed to vitest as the
 * test's console output, which the run prints only for a test that fails (`silent: "passed-only"`).
 * Each test file runs in a process of its own (vitest's default `isolate`), so the streams are
 * diverted once per process.
 */
const outputFile = openSync(inject("outputFile"), "a");

function testLabel(): string {
  const { testPath, currentTestName } = expect.getState();
  const file = testPath ? relative(process.cwd(), testPath) : "outside a test file";
  return currentTestName ? `${file} > ${currentTestName}` : file;
}

function divert(stream: NodeJS.WriteStream, echo: (text: string) => void): void {
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    writeSync(outputFile, `[${testLabel()}] ${text.endsWith("\n") ? text : `${text}\n`}`);
    echo(text.replace(/\n$/, ""));
    const written = rest.find((arg) => typeof arg === "function") as (() => void) | undefined;
    if (written) process.nextTick(written);
    return true;
  }) as typeof stream.write;
}

divert(process.stdout, (text) => console.log(text));
divert(process.stderr, (text) => console.error(text));
