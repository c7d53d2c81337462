import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium } from "playwright-core";
import { sha256Hex } from "#shared/browsers/task/digest.ts";

const entryScript = join(import.meta.dirname, "../../shared/browsers/task/entry.ts");

export interface BrowserTaskEntryOptions {
  /** The Chromium executable the entry starts. */
  chromium: string;
  /** The entry is given only its SHA-256, as a launcher does. */
  adminSecret: string;
  /** Chosen by the launcher, as the ECS provider does, so it knows the URL without reading the ready line. */
  devtoolsId: string;
}

/** The entry's settings as a launch gives them, e.g. an ECS task's container overrides. */
export interface LaunchedBrowserTaskEntryOptions {
  chromium: string;
  environment: Record<string, string>;
}

export interface BrowserTaskEntry {
  process: ChildProcess;
  /** Settles with the entry's exit code. */
  exited: Promise<number | null>;
  port: number;
  /** `http://127.0.0.1:<port>`: where the admin calls go. */
  origin: string;
  devtoolsPath: string;
  /** Stops the entry if it still runs (it ends its Chromium first) and removes the Chromium profile. */
  dispose(): Promise<void>;
}

/** Starts the browser task's entry on 127.0.0.1 at a free port, as the local provider does, and waits for its ready line. */
export async function startBrowserTaskEntry(options: BrowserTaskEntryOptions | LaunchedBrowserTaskEntryOptions): Promise<BrowserTaskEntry> {
  const launchSettings =
    "environment" in options
      ? options.environment
      : { BROWSER_TASK_ADMIN_SECRET_SHA256: sha256Hex(options.adminSecret), BROWSER_TASK_DEVTOOLS_ID: options.devtoolsId };
  const userDataDir = await mkdtemp(join(tmpdir(), "acs-browser-task-"));
  const child = spawn(process.execPath, [entryScript], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH,
      ...launchSettings,
      // Whatever a launch sets, the entry listens on loopback only.
      BROWSER_TASK_HOST: "127.0.0.1",
      BROWSER_TASK_PORT: "0",
      BROWSER_TASK_CHROMIUM: options.chromium,
      BROWSER_TASK_USER_DATA_DIR: userDataDir,
    },
  });
  const exited = new Promise<number | null>((settled) => child.once("exit", settled));
  const dispose = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
    await rm(userDataDir, { recursive: true, force: true });
  };
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const line = await Promise.race([
      new Promise<string>((read) => createInterface({ input: child.stdout! }).once("line", read)),
      exited.then((code) => Promise.reject(new Error(`the entry exited with ${code}: ${stderr.slice(-1000)}`))),
    ]);
    const { port, devtools_path: devtoolsPath } = (JSON.parse(line) as { ready: { port: number; devtools_path: string } }).ready;
    return { process: child, exited, port, origin: `http://127.0.0.1:${port}`, devtoolsPath, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Drives a browser through a DevTools URL: opens `pageUrl` in a new page and answers its title. */
export async function titleOverCdp(devtoolsUrl: string, pageUrl: string): Promise<string> {
  const browser = await chromium.connectOverCDP(devtoolsUrl);
  try {
    const page = await (browser.contexts()[0] ?? (await browser.newContext())).newPage();
    await page.goto(pageUrl);
    return await page.title();
  } finally {
    await browser.close();
  }
}
