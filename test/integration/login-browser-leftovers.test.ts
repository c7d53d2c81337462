import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ownedName, thisProcess } from "#shared/chromium/processes.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";

// The sweep works on os.tmpdir(): this file gives its process one of its own, so that the machine's
// /tmp and other test processes are never part of the test.
const machineTmp = tmpdir();
const privateTmp = mkdtempSync(join(machineTmp, "acs-leftovers-test-"));
process.env.TMPDIR = privateTmp;

const scratchPrefix = "acs-login-browser";
const longerThanAnyLoginBrowserLives = 16 * 60_000;

let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let browser: Browser | undefined;

beforeAll(async () => {
  chromium = await loginChromiumForTests();
});

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  expect(chromium?.running() ?? []).toEqual([]);
  await chromium?.dispose();
  process.env.TMPDIR = machineTmp;
  await rm(privateTmp, { recursive: true, force: true });
});

async function profileDir(name: string, ageMs: number): Promise<string> {
  const path = join(privateTmp, name);
  await mkdir(path);
  const at = new Date(Date.now() - ageMs);
  await utimes(path, at, at);
  return path;
}

describe("what login browsers of killed processes leave in the temporary directory", () => {
  it("the first launch removes scratch directories of gone processes and Playwright's abandoned profiles; those of live processes stay", async () => {
    // A process that has exited: its pid names no process (or, reused, one started later).
    const gone = { pid: spawnSync("true").pid as number, startTime: 1 };
    const ofGoneProcess = await mkdtemp(join(privateTmp, ownedName(scratchPrefix, gone)));
    const ofLiveProcess = await mkdtemp(join(privateTmp, ownedName(scratchPrefix, await thisProcess())));
    const abandonedProfile = await profileDir("playwright_chromiumdev_profile-abandoned", longerThanAnyLoginBrowserLives);
    const recentProfile = await profileDir("playwright_chromiumdev_profile-recent", 0);
    const profileInUse = await profileDir("playwright_chromiumdev_profile-in-use", longerThanAnyLoginBrowserLives);
    // A long-lived browser of another process, started on that profile.
    const user = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "--", `--user-data-dir=${profileInUse}`], { stdio: "ignore" });
    try {
      await new Promise((started) => user.once("spawn", started));

      browser = await chromium.launch();

      expect(existsSync(ofGoneProcess)).toBe(false);
      expect(existsSync(abandonedProfile)).toBe(false);
      expect(existsSync(ofLiveProcess)).toBe(true);
      expect(existsSync(recentProfile)).toBe(true);
      expect(existsSync(profileInUse)).toBe(true);
    } finally {
      user.kill("SIGKILL");
    }
  });

  it("keeps the browser's own files, Playwright's included, in a scratch directory named for this process, removed when it closes", async () => {
    const owner = await thisProcess();
    const before = new Set(await readdir(privateTmp));

    browser = await chromium.launch();
    const context = await browser.newContext();
    await context.tracing.start({ snapshots: true });
    await context.tracing.stop();

    // Playwright makes the browser's profile in the temporary directory, with no option to place it.
    const added = (await readdir(privateTmp)).filter((name) => !before.has(name) && !name.startsWith("playwright_chromiumdev_profile-"));
    expect(added).toEqual([expect.stringMatching(new RegExp(`^\\${ownedName(scratchPrefix, owner)}`))]);
    const scratch = join(privateTmp, added[0]!);
    expect(await readdir(scratch)).toContain("playwright");
    await browser.close();
    browser = undefined;
    await eventually(async () => (existsSync(scratch) ? undefined : true), "the scratch directory to be removed");
  });
});
