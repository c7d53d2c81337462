import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PoolResource, SessionResource } from "#shared/domain/pool.ts";
import { eventually } from "../support/poll.ts";
import { answersCdp, chromiumProcesses, poolApi, startTestSite } from "../support/pools.ts";
import { startTestStack } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let site: Awaited<ReturnType<typeof startTestSite>>;
let call: ReturnType<typeof poolApi>;
let browserRoot: string;
let stopped = false;

beforeAll(async () => {
  stack = await startTestStack();
  browserRoot = process.env.BROWSER_DATA_DIR as string;
  call = poolApi(stack);
  site = await startTestSite("<html><body><h1>hello from the test site</h1></body></html>");
});

afterAll(async () => {
  await site?.stop();
  if (!stopped) await stack?.stop();
});

const poolCounts = async (id: string) => {
  const { body } = await call<PoolResource>("GET", `/browser_pools/${id}`);
  return { idle: body.available_count, leased: body.acquired_count };
};

describe("a pool of real Chromium browsers", () => {
  it("fills, leases over CDP, and flushes only its idle browser before refilling", async () => {
    const created = await call<PoolResource>("POST", "/browser_pools", { name: "three", size: 3, fill_rate_per_minute: 6000 });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await eventually(async () => ((await poolCounts(id)).idle === 3 ? true : undefined), "the pool to fill to 3");

    const first = await call<SessionResource>("POST", "/browser_pools/three/acquire", {});
    const second = await call<SessionResource>("POST", `/browser_pools/${id}/acquire`, { acquire_timeout_seconds: 0 });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.body.session_id).not.toBe(second.body.session_id);
    expect(first.body.session_id).toMatch(/^bs_/);
    expect(first.body).toMatchObject({ timeout_seconds: 600, headless: true, pool: { id, name: "three" } });

    const browser = await chromium.connectOverCDP(first.body.cdp_ws_url);
    const context = browser.contexts()[0] ?? (await browser.newContext());
    const page = await context.newPage();
    await page.goto(site.url);
    expect(await page.textContent("h1")).toBe("hello from the test site");

    const leased = new Set([first.body.session_id, second.body.session_id]);
    const before = chromiumProcesses(browserRoot);
    expect(before.size).toBe(3);
    const idleSession = [...before.keys()].find((session) => !leased.has(session)) as string;
    expect(await poolCounts(id)).toEqual({ idle: 1, leased: 2 });

    const flushed = await call("POST", `/browser_pools/${id}/flush`);
    expect(flushed.status).toBe(204);

    expect(chromiumProcesses(browserRoot).has(idleSession)).toBe(false);
    // The first browser serves its one client, the connection above.
    expect(browser.isConnected()).toBe(true);
    expect(await answersCdp(second.body.cdp_ws_url)).toBe(true);
    await page.reload();
    expect(await page.textContent("h1")).toBe("hello from the test site");

    const refilled = await eventually(async () => {
      const counts = await poolCounts(id);
      return counts.idle + counts.leased === 3 ? counts : undefined;
    }, "the pool to refill to 3");
    expect(refilled).toEqual({ idle: 1, leased: 2 });
    const after = chromiumProcesses(browserRoot);
    expect(after.size).toBe(3);
    expect([...leased].every((session) => after.has(session))).toBe(true);
    expect(after.has(idleSession)).toBe(false);

    await browser.close();
    expect((await call("POST", `/browser_pools/${id}/release`, { session_id: first.body.session_id })).status).toBe(204);
    expect((await call("POST", `/browser_pools/${id}/release`, { session_id: second.body.session_id, reuse: false })).status).toBe(204);
    expect(chromiumProcesses(browserRoot).has(second.body.session_id)).toBe(false);
    expect(chromiumProcesses(browserRoot).has(first.body.session_id)).toBe(true);
  });

  it("reclaims a lease past the pool's timeout and replaces the browser", async () => {
    const created = await call<PoolResource>("POST", "/browser_pools", { size: 1, timeout_seconds: 10, fill_rate_per_minute: 6000 });
    const id = created.body.id;
    const session = await call<SessionResource>("POST", `/browser_pools/${id}/acquire`, { acquire_timeout_seconds: 20 });
    expect(session.status).toBe(200);
    await eventually(async () => (chromiumProcesses(browserRoot).has(session.body.session_id) ? undefined : true), "the lease to be reclaimed", 30);
    expect(await answersCdp(session.body.cdp_ws_url)).toBe(false);
    await eventually(async () => ((await poolCounts(id)).idle === 1 ? true : undefined), "a replacement browser");
    const release = await call("POST", `/browser_pools/${id}/release`, { session_id: session.body.session_id });
    expect(release.status).toBe(404);
  });

  it("deletes a pool with its browsers, refusing while one is leased unless forced", async () => {
    const { body: pool } = await call<PoolResource>("POST", "/browser_pools", { size: 2, fill_rate_per_minute: 6000 });
    await eventually(async () => ((await poolCounts(pool.id)).idle === 2 ? true : undefined), "the pool to fill to 2");
    const session = await call<SessionResource>("POST", `/browser_pools/${pool.id}/acquire`, {});
    const refused = await call("DELETE", `/browser_pools/${pool.id}`);
    expect(refused.status).toBe(409);
    expect(refused.headers.get("x-should-retry")).toBe("false");
    expect(await poolCounts(pool.id)).toEqual({ idle: 1, leased: 1 });

    expect((await call("DELETE", `/browser_pools/${pool.id}`, { force: true })).status).toBe(204);
    expect((await call("GET", `/browser_pools/${pool.id}`)).status).toBe(404);
    expect(await answersCdp(session.body.cdp_ws_url)).toBe(false);
  });

  it("ends every browser when the stack stops", async () => {
    expect(chromiumProcesses(browserRoot).size).toBeGreaterThan(0);
    stopped = true;
    await stack.stop();
    expect(chromiumProcesses(browserRoot).size).toBe(0);
  });
});
