import type Kernel from "@onkernel/sdk";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../support/poll.ts";
import { startTestSite, upgradeStatus } from "../support/pools.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
let site: Awaited<ReturnType<typeof startTestSite>>;

beforeAll(async () => {
  stack = await startTestStack();
  client = officialClient(stack);
  site = await startTestSite("<html><head><title>leased</title></head><body>ok</body></html>");
});

afterAll(async () => {
  await site?.stop();
  await stack?.stop();
});

/** The same URL with another token, or with none. */
function withToken(cdpWsUrl: string, token: string | null): string {
  const url = new URL(cdpWsUrl);
  if (token === null) url.searchParams.delete("token");
  else url.searchParams.set("token", token);
  return url.href;
}

const tokenOf = (cdpWsUrl: string) => new URL(cdpWsUrl).searchParams.get("token") as string;

describe("an acquired browser's cdp_ws_url", () => {
  it("admits its lease's holder and refuses the URL without its token, another lease's token and a released lease", async () => {
    const pool = await client.browserPools.create({ size: 2, fill_rate_per_minute: 6000 });
    await eventually(async () => ((await client.browserPools.retrieve(pool.id)).available_count === 2 ? true : undefined), "the pool to fill");
    const first = await client.browserPools.acquire(pool.id, { acquire_timeout_seconds: 5 });
    const second = await client.browserPools.acquire(pool.id, { acquire_timeout_seconds: 5 });
    expect(tokenOf(first.cdp_ws_url)).not.toBe(tokenOf(second.cdp_ws_url));

    const browser = await chromium.connectOverCDP(first.cdp_ws_url);
    const page = await (browser.contexts()[0] ?? (await browser.newContext())).newPage();
    await page.goto(site.url);
    expect(await page.title()).toBe("leased");
    await browser.close();

    expect(await upgradeStatus(withToken(first.cdp_ws_url, null))).toBe(401);
    expect(await upgradeStatus(withToken(first.cdp_ws_url, tokenOf(second.cdp_ws_url)))).toBe(401);
    expect(await upgradeStatus(second.cdp_ws_url)).toBe(101);

    await client.browserPools.release(pool.id, { session_id: first.session_id, reuse: true });
    expect(await upgradeStatus(first.cdp_ws_url)).toBe(401);

    const again = await client.browserPools.acquire(pool.id, { acquire_timeout_seconds: 5 });
    expect(again.session_id).toBe(first.session_id);
    expect(await upgradeStatus(first.cdp_ws_url)).toBe(401);
    expect(await upgradeStatus(again.cdp_ws_url)).toBe(101);

    await client.browserPools.release(pool.id, { session_id: second.session_id, reuse: false });
    // Destroyed: nothing listens there, or a later browser that took the port refuses the token.
    expect(await upgradeStatus(second.cdp_ws_url)).not.toBe(101);
  });
});
