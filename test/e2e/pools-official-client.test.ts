import Kernel, { ConflictError, NotFoundError } from "@onkernel/sdk";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/poll.ts";
import { chromiumProcesses, startTestSite } from "../support/pools.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
let site: Awaited<ReturnType<typeof startTestSite>>;
let browserRoot: string;

beforeAll(async () => {
  stack = await startTestStack();
  client = officialClient(stack);
  browserRoot = process.env.BROWSER_DATA_DIR as string;
  site = await startTestSite("<html><head><title>pooled</title></head><body>ok</body></html>");
});

afterAll(async () => {
  await site?.stop();
  await stack?.stop();
});

describe("browser pools through the official Kernel client", () => {
  it("creates, retrieves, lists, acquires, releases, flushes and deletes a pool", async () => {
    const created = await client.browserPools.create({ name: "sdk-pool", size: 2, timeout_seconds: 120, fill_rate_per_minute: 6000 });
    expect(created).toMatchObject({
      name: "sdk-pool",
      acquired_count: 0,
      extension_ids: [],
      browser_pool_config: { size: 2, timeout_seconds: 120, fill_rate_per_minute: 6000, headless: false },
    });
    expect(created.id).toMatch(/^bp_/);

    const filled = await eventually(async () => {
      const pool = await client.browserPools.retrieve("sdk-pool");
      return pool.available_count === 2 ? pool : undefined;
    }, "the pool to fill");
    expect(filled.id).toBe(created.id);

    const listed = [];
    for await (const pool of client.browserPools.list()) listed.push(pool.id);
    expect(listed).toEqual([created.id]);

    const session = await client.browserPools.acquire(created.id, { acquire_timeout_seconds: 5 });
    expect(session).toMatchObject({ timeout_seconds: 120, headless: true, pool: { id: created.id, name: "sdk-pool" } });
    const browser = await chromium.connectOverCDP(session.cdp_ws_url);
    const page = await (browser.contexts()[0] ?? (await browser.newContext())).newPage();
    await page.goto(site.url);
    expect(await page.title()).toBe("pooled");
    await browser.close();
    expect(await client.browserPools.retrieve(created.id)).toMatchObject({ available_count: 1, acquired_count: 1 });

    await expect(client.browserPools.delete(created.id)).rejects.toBeInstanceOf(ConflictError);
    await client.browserPools.release(created.id, { session_id: session.session_id, reuse: true });
    expect(await client.browserPools.retrieve(created.id)).toMatchObject({ available_count: 2, acquired_count: 0 });

    const updated = await client.browserPools.update("sdk-pool", { size: 1, name: "renamed" });
    expect(updated.browser_pool_config).toMatchObject({ size: 1, name: "renamed" });
    const trimmed = await eventually(async () => {
      const running = chromiumProcesses(browserRoot);
      return (await client.browserPools.retrieve("renamed")).available_count === 1 && running.size === 1 ? running : undefined;
    }, "the pool to shrink to 1");

    await client.browserPools.flush("renamed");
    expect(chromiumProcesses(browserRoot).has([...trimmed.keys()][0] as string)).toBe(false);
    await eventually(async () => ((await client.browserPools.retrieve("renamed")).available_count === 1 ? true : undefined), "the refill");
    const only = await client.browserPools.acquire("renamed", { acquire_timeout_seconds: 0 });
    // 204: no browser became idle within the wait.
    expect(await client.browserPools.acquire("renamed", { acquire_timeout_seconds: 0.2 })).toBeNull();
    await client.browserPools.release("renamed", { session_id: only.session_id, reuse: false });

    await client.browserPools.delete("renamed");
    await expect(client.browserPools.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
    // A replacement for the released browser may still be starting: the filler ends it once the delete shows.
    await eventually(async () => (chromiumProcesses(browserRoot).size === 0 ? true : undefined), "every browser of the pool to end");
  });
});
