import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { findPackageJSON } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { localChromium } from "#shared/browsers/local-chromium.ts";
import { poolFiller } from "#shared/domain/pool-filler.ts";
import { dynamoPoolStore } from "#shared/store/pools-store.ts";
import { ensureTable } from "../../infra/local/dynamodb-local.ts";
import { commandLineOf } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";
import { chromiumProcesses } from "../support/pools.ts";
import { tableClientAt } from "../support/stack.ts";

const dataDir = mkdtempSync(join(tmpdir(), "acs-local-chromium-"));
// Open to pass through, as the service leaves its data: run as root, each browser runs as a user of its own.
chmodSync(dataDir, 0o711);
const root = join(dataDir, "browsers");
const unpackDir = join(dataDir, "chromium");
const packageVersion = (JSON.parse(readFileSync(findPackageJSON("@sparticuz/chromium", import.meta.url) as string, "utf8")) as { version: string }).version;
const executable = join(unpackDir, packageVersion, "chromium");
const browsers = localChromium({ root, unpackDir });

/** A process's start time (clock ticks after boot), the twenty-second field of /proc/<pid>/stat. */
function startTimeOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

/** The identity of a process that has exited and been reaped. */
async function endedProcess(): Promise<{ pid: number; startTime: number }> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await new Promise((started, failed) => child.once("spawn", started).once("error", failed));
  const identity = { pid: child.pid as number, startTime: startTimeOf(child.pid as number) };
  const exited = new Promise((done) => child.once("exit", done));
  child.kill("SIGKILL");
  await exited;
  return identity;
}

/** A launch directory as a launch leaves it before the browser's pid is written. */
function launchDir(sessionId: string, launcher: { pid: number; startTime: number }): string {
  const dir = join(root, sessionId);
  mkdirSync(join(dir, "profile"), { recursive: true });
  writeFileSync(join(dir, "launcher.json"), JSON.stringify(launcher));
  writeFileSync(join(dir, "browser.log"), "");
  return dir;
}

beforeAll(async () => {
  // What @sparticuz/chromium reuses when it finds it: a binary a crash cut short, or an older version's.
  mkdirSync(unpackDir, { recursive: true });
  writeFileSync(join(unpackDir, "chromium"), "\x7fELF cut short", { mode: 0o755 });
  mkdirSync(join(unpackDir, "1.0.0"));
  writeFileSync(join(unpackDir, "1.0.0", "chromium"), "#!/bin/sh\n", { mode: 0o755 });
  // What a crash in the middle of an unpack leaves now.
  const crashed = await endedProcess();
  const cutShortUnpack = join(unpackDir, `.unpacking-${crashed.pid}-${crashed.startTime}-cut`);
  mkdirSync(cutShortUnpack);
  writeFileSync(join(cutShortUnpack, "chromium"), "\x7fELF cut short");
  // The first launch unpacks Chromium; the leftover tests start it by hand from there.
  await browsers.destroy((await browsers.launch({ sessionId: "bs_first", startUrl: null })).ref);
});

afterAll(async () => {
  for (const pid of chromiumProcesses(root).values()) process.kill(-pid, "SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * A browser launched through the provider whose browser.json is then removed, as a crash between
 * starting its entry and writing the file leaves it. `cleanUp` kills what a failing test leaves.
 */
async function launchUnrecorded(sessionId: string) {
  const { ref } = await browsers.launch({ sessionId, startUrl: null });
  const dir = join(root, sessionId);
  const entry = Number(ref.slice(0, ref.indexOf("@")));
  const chromium = chromiumProcesses(root).get(sessionId) as number;
  rmSync(join(dir, "browser.json"));
  const cleanUp = () => {
    // The entry leads the process group of its Chromium and helpers.
    if (commandLineOf(entry) !== undefined) process.kill(-entry, "SIGKILL");
  };
  return { ref, dir, entry, chromium, cleanUp };
}

/** The restarted service's first pass, over a table with no pools: whatever runs is a leftover. */
async function reconcile(): Promise<void> {
  const tableName = `chromium-${randomBytes(6).toString("hex")}`;
  await ensureTable(inject("dynamoEndpoint"), tableName);
  await poolFiller({ pools: dynamoPoolStore(tableClientAt(inject("dynamoEndpoint")), tableName), browsers }).tick();
}

describe("local Chromium", () => {
  it("unpacks the packaged Chromium into a directory named by its version, under its own directory that only its owner may list or write, and runs it from there", async () => {
    const launched = await browsers.launch({ sessionId: "bs_unpacked", startUrl: null });
    try {
      const pid = chromiumProcesses(root).get("bs_unpacked");
      expect(pid).toBeDefined();
      expect(realpathSync(`/proc/${pid}/exe`)).toBe(executable);
      expect(statSync(unpackDir).mode & 0o777).toBe(0o711);
      expect(statSync(join(unpackDir, packageVersion)).mode & 0o777).toBe(0o755);
      expect(readdirSync(unpackDir)).toEqual([packageVersion]);
    } finally {
      await browsers.destroy(launched.ref);
    }
  });

  it("reuses, in another provider, the version's unpacked Chromium without unpacking again", async () => {
    // An unpack creates a directory in the unpack root, and so changes the root's modification time.
    const before = statSync(unpackDir, { bigint: true }).mtimeNs;

    const launched = await localChromium({ root, unpackDir }).launch({ sessionId: "bs_second_provider", startUrl: null });
    const pid = chromiumProcesses(root).get("bs_second_provider");
    const runs = pid && realpathSync(`/proc/${pid}/exe`);
    await browsers.destroy(launched.ref);

    expect(runs).toBe(executable);
    expect(statSync(unpackDir, { bigint: true }).mtimeNs).toBe(before);
  });

  it("removes, on the restart's reconcile, the directory of a launch that a crash cut short", async () => {
    // What a crash between creating the directory and starting the browser leaves.
    const dir = launchDir("bs_cut_short", await endedProcess());

    await reconcile();

    expect(existsSync(dir)).toBe(false);
  });

  it("leaves alone, on a reconcile, a launch whose launcher still runs (another provider's, in this process or another)", async () => {
    const dir = launchDir("bs_in_progress", { pid: process.pid, startTime: startTimeOf(process.pid) });
    try {
      await reconcile();

      expect(existsSync(join(dir, "profile"))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("removes a launch whose launcher's pid now belongs to a later process", async () => {
    const dir = launchDir("bs_pid_reused", { pid: process.pid, startTime: startTimeOf(process.pid) - 1 });

    await reconcile();

    expect(existsSync(dir)).toBe(false);
  });

  it("ends the browser, and removes its directory, of a launch cut short before its pid was written", async () => {
    // What a crash between starting the browser and writing browser.json leaves.
    const dir = launchDir("bs_unrecorded", await endedProcess());
    const browser = spawn(executable, ["--headless", "--no-sandbox", "--remote-debugging-port=0", `--user-data-dir=${join(dir, "profile")}`, "about:blank"], {
      detached: true,
      stdio: "ignore",
    });
    await new Promise((started, failed) => browser.once("spawn", started).once("error", failed));
    expect(chromiumProcesses(root).has("bs_unrecorded")).toBe(true);

    await reconcile();

    await eventually(async () => (chromiumProcesses(root).has("bs_unrecorded") ? undefined : true), "the unrecorded browser to end");
    expect(existsSync(dir)).toBe(false);
  });

  it("ends the entry and its Chromium when destroying a browser whose browser.json is missing", async () => {
    const browser = await launchUnrecorded("bs_destroy_unrecorded");
    try {
      expect(commandLineOf(browser.chromium)).toBeDefined();

      await browsers.destroy(browser.ref);

      expect(commandLineOf(browser.entry)).toBeUndefined();
      expect(commandLineOf(browser.chromium)).toBeUndefined();
      expect(existsSync(browser.dir)).toBe(false);
    } finally {
      browser.cleanUp();
    }
  });

  it("ends, as a leftover, the entry of a launch cut short before browser.json was written, with its Chromium", async () => {
    const browser = await launchUnrecorded("bs_entry_unrecorded");
    try {
      writeFileSync(join(browser.dir, "launcher.json"), JSON.stringify(await endedProcess()));
      // Stopped, the entry cannot end itself when its Chromium ends: it stays, as an entry that has
      // not started Chromium yet would.
      process.kill(browser.entry, "SIGSTOP");

      expect(await browsers.running()).not.toContain(browser.ref);

      expect(commandLineOf(browser.entry)).toBeUndefined();
      expect(commandLineOf(browser.chromium)).toBeUndefined();
      expect(existsSync(browser.dir)).toBe(false);
    } finally {
      browser.cleanUp();
    }
  });
});
