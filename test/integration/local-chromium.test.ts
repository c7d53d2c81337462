import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { localChromium } from "#shared/browsers/local-chromium.ts";
import { poolFiller } from "#shared/domain/pool-filler.ts";
import { dynamoPoolStore } from "#shared/store/pools-store.ts";
import { ensureTable } from "../../infra/local/dynamodb-local.ts";
import { eventually } from "../support/poll.ts";
import { chromiumProcesses } from "../support/pools.ts";
import { tableClientAt } from "../support/stack.ts";

const dataDir = mkdtempSync(join(tmpdir(), "acs-local-chromium-"));
const root = join(dataDir, "browsers");
const unpackDir = join(dataDir, "chromium");
const browsers = localChromium({ root, unpackDir });

beforeAll(async () => {
  // The first launch unpacks Chromium; the leftover tests start it by hand from there.
  await browsers.destroy((await browsers.launch({ sessionId: "bs_first", startUrl: null })).ref);
});

afterAll(async () => {
  for (const pid of chromiumProcesses(root).values()) process.kill(-pid, "SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

/** The restarted service's first pass, over a table with no pools: whatever runs is a leftover. */
async function reconcile(): Promise<void> {
  const tableName = `chromium-${randomBytes(6).toString("hex")}`;
  await ensureTable(inject("dynamoEndpoint"), tableName);
  await poolFiller({ pools: dynamoPoolStore(tableClientAt(inject("dynamoEndpoint")), tableName), browsers }).tick();
}

describe("local Chromium", () => {
  it("unpacks the packaged Chromium under its own 0700 directory and runs it from there", async () => {
    const launched = await browsers.launch({ sessionId: "bs_unpacked", startUrl: null });
    try {
      const pid = chromiumProcesses(root).get("bs_unpacked");
      expect(pid).toBeDefined();
      expect(realpathSync(`/proc/${pid}/exe`)).toBe(join(unpackDir, "chromium"));
      expect(statSync(unpackDir).mode & 0o777).toBe(0o700);
    } finally {
      await browsers.destroy(launched.ref);
    }
  });

  it("removes, on the restart's reconcile, the directory of a launch that a crash cut short", async () => {
    // What a crash between creating the directory and starting the browser leaves.
    const dir = join(root, "bs_cut_short");
    mkdirSync(join(dir, "profile"), { recursive: true });
    writeFileSync(join(dir, "browser.log"), "");

    await reconcile();

    expect(existsSync(dir)).toBe(false);
  });

  it("ends the browser, and removes its directory, of a launch cut short before its pid was written", async () => {
    // What a crash between starting the browser and writing browser.json leaves.
    const dir = join(root, "bs_unrecorded");
    mkdirSync(join(dir, "profile"), { recursive: true });
    const executable = join(unpackDir, "chromium");
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
});
