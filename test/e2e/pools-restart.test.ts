import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startService } from "../support/npm-start.ts";
import { localChromium } from "#shared/browsers/local-chromium.ts";
import type { PoolResource, SessionResource } from "#shared/domain/pool.ts";
import { eventually } from "../support/poll.ts";
import { answersCdp, chromiumProcesses, poolApi } from "../support/pools.ts";

const dataDir = mkdtempSync(join(tmpdir(), "acs-pool-restart-"));
const browserRoot = join(dataDir, "browsers");
const children: ChildProcessWithoutNullStreams[] = [];

const start = () => startService(dataDir, children);

/** Processes under this test's data dir that a killed service left running (DynamoDB Local's JVM). */
function leftoversOf(dir: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Ended on its own meanwhile.
  }
}

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  for (const pid of chromiumProcesses(browserRoot).values()) killQuietly(-pid);
  for (const pid of leftoversOf(dataDir)) killQuietly(pid);
  rmSync(dataDir, { recursive: true, force: true });
});

describe("npm start after a crash", () => {
  it("keeps live browsers, forgets dead ones and ends the ones no record names", async () => {
    const first = start();
    const call = poolApi(await first.ready);
    const { body: pool } = await call<PoolResource>("POST", "/browser_pools", { name: "survivor", size: 2, fill_rate_per_minute: 6000 });
    await eventually(async () => ((await call<PoolResource>("GET", "/browser_pools/survivor")).body.available_count === 2 ? true : undefined), "the pool to fill");
    const { body: leased } = await call<SessionResource>("POST", "/browser_pools/survivor/acquire", {});

    first.child.kill("SIGKILL");
    await first.exited;
    for (const pid of leftoversOf(join(dataDir, "dynamodb"))) killQuietly(pid);
    await eventually(async () => (leftoversOf(join(dataDir, "dynamodb")).length === 0 ? true : undefined), "DynamoDB Local to end");
    const survivors = chromiumProcesses(browserRoot);
    expect(survivors.size).toBe(2);
    const [idleSession, idlePid] = [...survivors].find(([session]) => session !== leased.session_id) as [string, number];
    // Chromium dies; its entry follows it.
    process.kill(idlePid, "SIGKILL");
    const orphan = await localChromium({ root: browserRoot, unpackDir: join(dataDir, "chromium") }).launch({ sessionId: "bs_orphan", startUrl: null });
    expect(chromiumProcesses(browserRoot).has("bs_orphan")).toBe(true);

    const second = start();
    const again = poolApi(await second.ready);
    const settled = await eventually(async () => {
      const { body } = await again<PoolResource>("GET", `/browser_pools/${pool.id}`);
      const running = chromiumProcesses(browserRoot);
      const done = body.acquired_count === 1 && body.available_count === 1 && running.size === 2 && !running.has("bs_orphan");
      return done ? running : undefined;
    }, "the restarted service to reconcile");
    expect(settled.has(leased.session_id)).toBe(true);
    expect(settled.has(idleSession)).toBe(false);
    expect(await answersCdp(leased.cdp_ws_url)).toBe(true);
    expect(await answersCdp(orphan.cdpWsUrl)).toBe(false);
    expect((await again("POST", "/browser_pools/survivor/release", { session_id: leased.session_id })).status).toBe(204);

    second.child.kill("SIGINT");
    await second.exited;
    expect(chromiumProcesses(browserRoot).size).toBe(0);
  });
});
