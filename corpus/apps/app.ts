import { spawn, type ChildProcess } from "node:child_process";
import { randomInt } from "node:crypto";
import { createWriteStream, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import type { StorageState } from "#shared/archive/storage-state.ts";
import { openContextWithState } from "#shared/login/browser/browser-state.ts";

/** What a browser holds for a site (cookies, storage): a login's session, as the service saves it too. */
export type Session = StorageState;

/** Where every app keeps its installed files and its data: `corpus/.apps/`, git-ignored. */
export const appsDir = join(dirname(dirname(fileURLToPath(import.meta.url))), ".apps");

/** What the runner lends every app: a browser of its own for the checks a script-drawn app needs. */
export interface CorpusTools {
  browser: Browser;
}

/** An app served on 127.0.0.1 with its seeded user. */
export interface RunningApp {
  /** The page a signed-in user lands on, and what the checks load. */
  url: string;
  loginUrl: string;
  username: string;
  password: string;
  /** The base32 secret of the user's authenticator app, for an app whose login asks a one-time code (TOTP). */
  totpSecret?: string;
  /**
   * The site's own words for a wrong password, as a person sees them; null for a site that says none
   * of its own (an HTTP Basic challenge asked again), where the service must invent none either.
   */
  wrongPassword: RegExp | null;
}

/** One real third-party app of the corpus. */
export interface CorpusApp {
  name: string;
  /** What it is, its version and its login's shape, for the docs' table. */
  description: string;
  /** Fetches and unpacks the pinned version under `appsDir`; does nothing when it is there already. */
  install(): Promise<void>;
  /** Serves the app on 127.0.0.1 with a fresh data directory and one seeded user. */
  start(tools: CorpusTools): Promise<RunningApp>;
  /** The runner's own login, as a person would do it: the ground truth that a session can be had at all. */
  signIn(): Promise<Session>;
  /** `session` with its secret values replaced by others of the same shape: what the app must refuse. */
  forge(session: Session): Session;
  /** The app itself, asked with `session` (by HTTP or a fresh browser), says the user is signed in. */
  signedIn(session: Session): Promise<boolean>;
  /** Ends every session of the seeded user on the server. */
  logoutEverywhere(): Promise<void>;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 now, for an app that must be told its port before it starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const address = server.address();
  await new Promise((closed) => server.close(closed));
  if (!address || typeof address === "string") throw new Error("no port was given");
  return address.port;
}

/** Runs a command to its end; fails with its output when it exits non-zero. */
export async function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  // "close", not "exit": the process may exit before its output has all been read.
  const code = await new Promise<number | null>((closed, failed) => {
    child.once("error", failed);
    child.once("close", closed);
  });
  if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${code}:\n${output.slice(-2000)}`);
  return output;
}

/** A long-running app process whose output goes to `logFile`. */
export function serve(command: string, args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv; logFile: string }): ChildProcess {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: "a" });
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return child;
}

/** Ends a process this runner started, and waits until it is gone. */
export async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((gone) => child.once("exit", gone));
  child.kill("SIGTERM");
  const killAfter = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(killAfter);
}

/** Polls `url` until `ready` says its answer is the app's, or fails after `seconds` or when the process exits. */
export async function waitForHttp(url: string, ready: (response: Response) => boolean, child: ChildProcess, seconds = 120): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${url}: the app exited (${child.exitCode ?? child.signalCode}) before it answered`);
    const response = await fetch(url, { redirect: "manual" }).catch(() => undefined);
    if (response && ready(response)) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer as the app within ${seconds} s (last: ${response?.status ?? "no answer"})`);
    await sleep(250);
  }
}

/** A random value of `like`'s length and alphabet class: a forged token that looks like the real one. */
export function forgedValue(like: string): string {
  const alphabet = /^[0-9a-f]+$/.test(like) ? "0123456789abcdef" : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let forged = "";
  while (forged.length < like.length) forged += alphabet[randomInt(alphabet.length)];
  return forged === like ? forgedValue(like) : forged;
}

/** Opens `url` with `session` in a fresh context of `browser` and hands its page to `use`; the context is closed after. */
export async function withPage<T>(browser: Browser, url: string, session: Session, use: (page: Page) => Promise<T>): Promise<T> {
  const context = await openContextWithState(browser, session);
  try {
    const page = await context.newPage();
    await page.goto(url);
    return await use(page);
  } finally {
    await context.close();
  }
}
