import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localChromium } from "#shared/browsers/local-chromium.ts";
import { demoUser } from "../../infra/local/demo-site.ts";
import { startDefaults } from "../../infra/local/start-defaults.ts";
import { eventually } from "../support/poll.ts";
import { patientMs } from "../support/patience.ts";

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
  api: string;
  key: string;
  demo: string;
  output(): string;
}

const dataDir = mkdtempSync(join(tmpdir(), "acs-readme-"));
/** Files the blocks write in the repo root (`-o file`, `> file`) that were not there before: removed at the end. */
const writtenFiles = runnable
  .flatMap((block) => [...block.code.matchAll(/(?:\s-o\s*|\s--output[=\s]|>\s*)([\w.-]+)/g)].map((match) => match[1]!))
  .filter((file) => !existsSync(join(repoRoot, file)));
/** Kept from the moment it is spawned, so that afterAll stops it even when it never served. */
let npmStart: ChildProcess | undefined;
let service: Service | undefined;

/** `npm start` as the README says to run it, in a process group of its own so its whole tree can be stopped. */
async function startService(): Promise<Service> {
  const child = spawn("npm", ["start"], {
    cwd: repoRoot,
    env: { ...process.env, PORT: "0", DEMO_PORT: "0", DATA_DIR: dataDir },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  npmStart = child;
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
  return { ...printed, output: () => output };
}

/**
 * Ctrl-C to npm start's process group (npm, the service, DynamoDB Local), then SIGKILL whatever of
 * it is left after a minute. Each browser leads a group of its own, which the signal does not reach:
 * ended afterwards from their directories, as a restarted service would.
 */
async function stopService(child: ChildProcess): Promise<void> {
  const group = -child.pid!;
  signalGroup(group, "SIGINT");
  await eventually(async () => (signalGroup(group, 0) ? undefined : true), "npm start's processes to stop", 60).catch(() => undefined);
  signalGroup(group, "SIGKILL");
  const browsers = localChromium({ root: join(dataDir, "browsers"), unpackDir: join(dataDir, "chromium") });
  for (const browser of await browsers.running()) await browsers.destroy(browser);
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
    .replaceAll(new RegExp(`http://(?:127\\.0\\.0\\.1|localhost):${startDefaults.port}\\b`, "g"), running.api)
    .replaceAll(new RegExp(`http://(?:127\\.0\\.0\\.1|localhost):${startDefaults.demoPort}\\b`, "g"), running.demo)
    .replaceAll(new RegExp(`(?<![\\w/])${startDefaults.dataDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/`, "g"), `${dataDir}/`);
}

interface Run {
  exitCode: number | null;
  output: string;
  /** The shared variables as the block left them exported (shell blocks only). */
  exported: Record<string, string>;
}

const lastLine = (output: string) => output.trimEnd().split("\n").at(-1);

/** The test's environment without the variables the quick start sets: the blocks before it must not see them. */
const newcomersEnvironment = Object.fromEntries(Object.entries(process.env).filter(([name]) => !sharedVariables.includes(name)));

/** Runs one block with `variables` in its environment; a shell block also reports what it exported. */
function runBlock(block: Block, code: string, variables: Record<string, string>): Promise<Run> {
  const shell = ["sh", "bash", "shell"].includes(block.lang);
  const report = sharedVariables.map((name) => `printf '${name}=%s\\n' "$(printenv ${name})" >&3`).join("\n");
  const [command, args] = shell
    ? ["bash", ["-c", `set -eo pipefail\n${code}\n${report}`]]
    : [join(repoRoot, "node_modules/.bin/node"), ["--input-type=module-typescript"]];
  // In a group of its own, so that a timeout ends what the block started too (npm's node, a curl).
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...newcomersEnvironment, DATA_DIR: dataDir, ...variables },
    stdio: ["pipe", "pipe", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  let reported = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  child.stdio[3]?.on("data", (chunk) => (reported += chunk));
  child.stdin?.end(shell ? "" : code);
  const timer = setTimeout(() => signalGroup(-child.pid!, "SIGKILL"), blockSeconds * 1000);
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
}, patientMs(240_000));

afterAll(async () => {
  if (npmStart) await stopService(npmStart);
  for (const file of writtenFiles) rmSync(join(repoRoot, file), { force: true });
  rmSync(dataDir, { recursive: true, force: true });
}, patientMs(120_000));

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
    const promisedLastLine = /its last line is `([^`]+)`/.exec(readme)?.[1];
    expect(promisedLastLine, "the quick start says what its last line is").toContain(`Signed in as ${demoUser.name}`);
    expect(lastLine(quickStartRun.output)).toBe(pointedAtService(promisedLastLine!, running));
    expect(variables).toEqual({ API: running.api, KEY: running.key, DEMO: running.demo });

    // "Run it again to start over."
    const again = await runBlock(quickStart[0]!, pointedAtService(quickStart[0]!.code, running), variables);

    expect(again.exitCode, again.output).toBe(0);
    expect(lastLine(again.output)).toBe(lastLine(quickStartRun.output));
  }, patientMs(900_000));

  it("quotes npm start's defaults: the ports and the data directory", () => {
    const setting = (name: string) => new RegExp(`^\\| \`${name}\` \\| \`([^\`]+)\` \\|`, "m").exec(readme)?.[1];

    expect(setting("PORT")).toBe(String(startDefaults.port));
    expect(setting("DEMO_PORT")).toBe(String(startDefaults.demoPort));
    expect(setting("DATA_DIR")).toBe(startDefaults.dataDir);
    expect(readme).toContain(`export API=http://127.0.0.1:${startDefaults.port} KEY=$(cat ${startDefaults.dataDir}/api-key) DEMO=http://127.0.0.1:${startDefaults.demoPort}`);
  });

  it("fails a curl block on an HTTP error rather than printing the error's body", () => {
    const curls = runnable.flatMap((block) => block.code.split("\n").filter((line) => /\bcurl\s/.test(line)));

    expect(curls).not.toEqual([]);
    for (const line of curls) expect(line).toMatch(/\s(-[a-zA-Z]*f[a-zA-Z]*|--fail)\s/);
  });

  it("deploys the stack that test/infra/synth.test.ts synthesizes: cdk.json's app builds it", () => {
    const cdkApp = (JSON.parse(readFileSync(join(repoRoot, "cdk.json"), "utf8")) as { app: string }).app;

    expect(cdkApp).toBe("node infra/app.ts");
    expect(readFileSync(join(repoRoot, "infra/app.ts"), "utf8")).toMatch(/^authConnectionApp\(new App\(\)/m);
    expect(readFileSync(join(repoRoot, "test/infra/synth.test.ts"), "utf8")).toMatch(/authConnectionApp\(app\)/);
  });

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
