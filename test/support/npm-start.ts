import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { resolve } from "node:path";

const startScript = resolve(import.meta.dirname, "../../infra/local/start.ts");

export interface StartedService {
  child: ChildProcessWithoutNullStreams;
  /** The URL and API key it prints once it serves; rejects if it exits first. */
  ready: Promise<{ url: string; apiKey: string }>;
  exited: Promise<number | null>;
  output(): string;
}

/** Runs `npm start`'s script, with `args` as after `npm start --`, on free ports; `children` collects the processes for cleanup. */
export function startService(dataDir: string, children: ChildProcessWithoutNullStreams[], args: string[] = []): StartedService {
  const child = spawn(process.execPath, [startScript, ...args], { env: { ...process.env, PORT: "0", DEMO_PORT: "0", DATA_DIR: dataDir } });
  children.push(child);
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  const ready = new Promise<{ url: string; apiKey: string }>((done, fail) => {
    child.stdout.on("data", () => {
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      const apiKey = /API key \(org 'local'\): (\S+)/.exec(output)?.[1];
      if (url && apiKey) done({ url, apiKey });
    });
    void exited.then((code) => fail(new Error(`exited with ${code}: ${output}`)));
  });
  // A start that is expected to be refused never becomes ready; that is not an unhandled failure.
  ready.catch(() => undefined);
  return { child, ready, exited, output: () => output };
}
