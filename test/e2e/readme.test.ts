import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoUser } from "../../infra/local/demo-site.ts";
import { eventually } from "../support/poll.ts";

/**
 * Runs every fenced code block of README.md, in order, against a real `npm start`, as a newcomer
 * would paste them into a second terminal: shell blocks with bash in the repo root, TypeScript with
 * the repo's Node. A block right after `<!-- not run: ... -->` is skipped; that comment must name the
 * test file that checks it another way.
 */

const repoRoot = resolve(import.meta.dirname, "../..");
const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
/** The variables the quick start exports for the blocks after it. */
const sharedVariables = ["API", "KEY", "DEMO"];
const blockSeconds = 240;
/** What checks a command the test cannot run here. */
const otherChecks = [
  { runs: /\bcdk (deploy|synth|bootstrap)\b/, checkedBy: /^test\/infra\/synth\.test\.ts$/ },
  { runs: /\bapi-key\b.*--aws\b/, checkedBy: /^test\/unit\/api-key-args\.test\.ts$/ },
];

interface Block {
  lang: string;
  code: string;
  /** 1-based line of the opening fence, to name the block in a failure. */
  line: number;
  /** The text of a `<!-- not run: ... -->` comment right before the block. */
  notRun?: string;
}

/** Fenced blocks (``` or ~~~, closed by a line of at least as many of the same mark) and the comment before each. */
function codeBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  let lastComment: string | undefined;
  for (let index = 0; index < lines.length; index++) {
    const opening = /^ {0,3}(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[index]!);
    if (!opening) {
      const text = lines[index]!.trim();
      if (text !== "") lastComment = /^<!--\s*not run:([\s\S]*?)-->$/.exec(text)?.[1]?.trim();
      continue;
    }
    const fence = opening[1]!;
    const closes = (line: string) => {
      const mark = line.trim();
      return mark.length >= fence.length && mark === fence[0]!.repeat(mark.length);
    };
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && !closes(lines[index]!); index++) body.push(lines[index]!);
    blocks.push({ lang: opening[2]!.toLowerCase(), code: body.join("\n"), line: start + 1, notRun: lastComment });
    lastComment = undefined;
  }
  return blocks;
}

const blocks = codeBlocks(readme);
const runnable = blocks.filter((block) => block.notRun === undefined);

interface Service {
  child: ChildProcess;
  api: string;
  key: string;
  demo: string;
  output(): string;
}

const dataDir = mkdtempSync(join(tmpdir(), "acs-readme-"));
const rootBefore = new Set(readdirSync(repoRoot));
let service: Service | undefined;

/** `npm start` as the README says to run it, in a process group of its own so its whole tree can be stopped. */
async function startService(): Promise<Service> {
  const child = spawn("npm", ["start"], {
    cwd: repoRoot,
    env: { ...process.env, PORT: "0", DEMO_PORT: "0", DATA_DIR: dataDir },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  let exited = false;
  child.once("exit", () => (exited = true));
  const printed = await eventually(
    async () => {
      if (exited) throw new Error(`npm start exited before it served:\n${output}`);
      const api = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      const key = /API key \(org 'local'\): (\S+)/.exec(output)?.[1];
      const demo = /Demo site to log in to: (http:\/\/\S+)/.exec(output)?.[1];
      return api && key && demo ? { api, key, demo } : undefined;
    },
    "npm start to print its URLs and key",
    180,
  );
  return { child, ...printed, output: () => output };
}

/** Ctrl-C to the whole group (npm, the service, DynamoDB Local), then SIGKILL whatever is left after a minute. */
async function stopService(child: ChildProcess): Promise<void> {
  const group = -child.pid!;
  signalGroup(group, "SIGINT");
  await eventually(async () => (signalGroup(group, 0) ? undefined : true), "npm start's processes to stop", 60).catch(() => undefined);
  signalGroup(group, "SIGKILL");
}

/** Whether the group still had a process to signal. */
function signalGroup(group: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(group, signal);
    return true;
  } catch (error) {
    if (error instanceof Error && "code" in error && error.code === "ESRCH") return false;
    throw error;
  }
}

/** The README's defaults, as a newcomer's first `npm start` uses them, pointed at the instance under test. */
function pointedAtService(code: string, running: Service): string {
  return code
    .replaceAll(/http:\/\/(?:127\.0\.0\.1|localhost):8080/g, running.api)
    .replaceAll(/http:\/\/(?:127\.0\.0\.1|localhost):8081/g, running.demo)
    .replaceAll(/(?<![\w/])\.data\//g, `${dataDir}/`);
}

interface Run {
  exitCode: number | null;
  output: string;
  /** The shared variables as the block left them exported (shell blocks only). */
  exported: Record<string, string>;
}

/** The test's environment without the variables the quick start sets: the blocks before it must not see them. */
const newcomersEnvironment = Object.fromEntries(Object.entries(process.env).filter(([name]) => !sharedVariables.includes(name)));

/** Runs one block with `variables` in its environment; a shell block also reports what it exported. */
function runBlock(block: Block, code: string, variables: Record<string, string>): Promise<Run> {
  const shell = ["sh", "bash", "shell"].includes(block.lang);
  const report = sharedVariables.map((name) => `printf '${name}=%s\\n' "$(printenv ${name})" >&3`).join("\n");
  const [command, args] = shell
    ? ["bash", ["-c", `set -eo pipefail\n${code}\n${report}`]]
    : [join(repoRoot, "node_modules/.bin/node"), ["--input-type=module-typescript"]];
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...newcomersEnvironment, DATA_DIR: dataDir, ...variables },
    stdio: ["pipe", "pipe", "pipe", "pipe"],
  });
  let output = "";
  let reported = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  child.stdio[3]?.on("data", (chunk) => (reported += chunk));
  child.stdin?.end(shell ? "" : code);
  const timer = setTimeout(() => child.kill("SIGKILL"), blockSeconds * 1000);
  return new Promise((done) =>
    child.once("close", (exitCode) => {
      clearTimeout(timer);
      const exported = Object.fromEntries(
        reported
          .split("\n")
          .map((line) => /^(\w+)=(.*)$/.exec(line))
          .filter((match): match is RegExpExecArray => match !== null && match[2] !== "")
          .map((match) => [match[1], match[2]]),
      );
      done({ exitCode, output, exported });
    }),
  );
}

beforeAll(async () => {
  service = await startService();
}, 240_000);

afterAll(async () => {
  if (service) await stopService(service.child);
  // Blocks run in the repo root: a file one downloads there is not the repo's.
  for (const entry of readdirSync(repoRoot, { withFileTypes: true })) {
    if (!rootBefore.has(entry.name) && entry.isFile()) rmSync(join(repoRoot, entry.name));
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 120_000);

describe("README.md", () => {
  it("runs every code block in order against npm start, and the quick start logs in to the demo site", async () => {
    const running = service!;
    // These would start a second service or run the whole suite from inside it.
    expect(runnable.filter((block) => /\bnpm (start|test)\b|\bvitest\b/.test(block.code)).map((block) => block.line)).toEqual([]);
    const quickStart = runnable.filter((block) => /\bnpm run quickstart\b/.test(block.code));
    const results: Array<{ block: Block; run: Run }> = [];
    let variables: Record<string, string> = {};
    for (const block of runnable) {
      const run = await runBlock(block, pointedAtService(block.code, running), variables);
      results.push({ block, run });
      if (run.exitCode !== 0) break;
      variables = { ...variables, ...run.exported };
    }

    const failed = results.find(({ run }) => run.exitCode !== 0);
    expect(
      failed,
      failed &&
        `the ${failed.block.lang} block at README.md:${failed.block.line} exited ${failed.run.exitCode}:\n${failed.block.code}\n--- its output:\n${failed.run.output}\n--- npm start's output:\n${running.output().slice(-8000)}`,
    ).toBeUndefined();
    expect(results).toHaveLength(runnable.length);
    expect(quickStart, "a README block runs `npm run quickstart`").toHaveLength(1);
    const quickStartRun = results.find(({ block }) => block === quickStart[0])!.run;
    expect(quickStartRun.output).toContain(`Signed in as ${demoUser.name}`);
    expect(variables).toEqual({ API: running.api, KEY: running.key, DEMO: running.demo });
  }, 900_000);

  it("says of each block it does not run which test checks it instead, and that test exists", () => {
    const skipped = blocks.filter((block) => block.notRun !== undefined);
    const checks = skipped.map((block) => ({ line: block.line, named: [...block.notRun!.matchAll(/\btest\/[\w./-]+\.test\.ts\b/g)].map((match) => match[0]) }));

    expect(skipped.map((block) => block.code).join("\n")).toMatch(/\bnpm start\b/);
    for (const check of checks) {
      expect(check.named, `the not-run comment before README.md:${check.line} names a test file`).not.toEqual([]);
      for (const file of check.named) expect(existsSync(join(repoRoot, file)), `${file}, named before README.md:${check.line}`).toBe(true);
    }
    for (const block of skipped) {
      const named = checks.find((check) => check.line === block.line)!.named;
      for (const { runs, checkedBy } of otherChecks) {
        if (runs.test(block.code)) expect(named, `the check named before README.md:${block.line}`).toContainEqual(expect.stringMatching(checkedBy));
      }
    }
  });

  it("runs only blocks it knows how to run", () => {
    const unknown = runnable.filter((block) => !["sh", "bash", "shell", "ts", "typescript"].includes(block.lang));

    expect(unknown.map((block) => `README.md:${block.line} (${block.lang || "no language"})`)).toEqual([]);
  });
});
