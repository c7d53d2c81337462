import { randomBytes } from "node:crypto";
import { beforeEach, describe, expect, inject, it } from "vitest";
import type { BrowserProvider } from "#shared/browsers/provider.ts";
import { poolFiller } from "#shared/domain/pool-filler.ts";
import { poolsCore } from "#shared/domain/pools.ts";
import { dynamoPoolStore } from "#shared/store/pools-store.ts";
import { ensureTable } from "../../infra/local/dynamodb-local.ts";
import { tableClientAt } from "../support/stack.ts";

const org = "org-filler";

/** Browsers as entries in a set: what runs is what the test says runs. */
function fakeBrowsers() {
  const live = new Set<string>();
  const destroyed: string[] = [];
  let launched = 0;
  const provider: BrowserProvider = {
    async launch(spec) {
      const ref = `fake-${++launched}-${spec.sessionId}`;
      live.add(ref);
      return { ref, cdpWsUrl: `ws://127.0.0.1:1/devtools/browser/${ref}`, headless: true };
    },
    async destroy(ref) {
      live.delete(ref);
      destroyed.push(ref);
    },
    async running() {
      return [...live];
    },
  };
  return { provider, live, destroyed };
}

let store: ReturnType<typeof dynamoPoolStore>;
let browsers: ReturnType<typeof fakeBrowsers>;
let clock: Date;
let core: ReturnType<typeof poolsCore>;
let filler: ReturnType<typeof poolFiller>;

beforeEach(async () => {
  const tableName = `filler-${randomBytes(6).toString("hex")}`;
  await ensureTable(inject("dynamoEndpoint"), tableName);
  store = dynamoPoolStore(tableClientAt(inject("dynamoEndpoint")), tableName);
  browsers = fakeBrowsers();
  clock = new Date("2026-11-23T10:00:00.000Z");
  const now = () => clock;
  core = poolsCore({ pools: store, browsers: browsers.provider, resolveProfile: async () => "unused", now });
  filler = poolFiller({ pools: store, browsers: browsers.provider, now });
});

const advance = (seconds: number) => {
  clock = new Date(clock.getTime() + seconds * 1000);
};

const counts = async (id: string) => {
  const pool = await core.get(org, id);
  return [pool.available_count, pool.acquired_count];
};

describe("the pool filler", () => {
  it("fills at the pool's fill rate, not faster", async () => {
    const pool = await core.create(org, { size: 4, fill_rate_per_minute: 150 });
    await filler.tick();
    expect(await counts(pool.id)).toEqual([1, 0]);
    await filler.tick();
    expect(await counts(pool.id)).toEqual([1, 0]);
    // 150 % of 4 per minute is 6 a minute: one every 10 s.
    advance(10);
    await filler.tick();
    expect(await counts(pool.id)).toEqual([2, 0]);
    advance(60);
    await filler.tick();
    await filler.tick();
    advance(60);
    await filler.tick();
    expect(await counts(pool.id)).toEqual([4, 0]);
    expect(browsers.live.size).toBe(4);
  });

  it("reclaims a lease past its timeout, ends that browser and replaces it", async () => {
    const pool = await core.create(org, { size: 1, timeout_seconds: 30, fill_rate_per_minute: 6000 });
    await filler.tick();
    const session = await core.acquire(org, pool.id, 0);
    const leasedRef = [...browsers.live][0];
    advance(29);
    await filler.tick();
    expect(await counts(pool.id)).toEqual([0, 1]);
    advance(1);
    await filler.tick();
    expect(browsers.destroyed).toEqual([leasedRef]);
    expect(await counts(pool.id)).toEqual([1, 0]);
    await expect(core.release(org, pool.id, session?.session_id as string, true)).rejects.toMatchObject({ status: 404 });
  });

  it("forgets records of browsers that died and ends browsers no record names", async () => {
    const pool = await core.create(org, { size: 2, fill_rate_per_minute: 6000 });
    await filler.tick();
    const [dead, kept] = [...browsers.live] as [string, string];
    browsers.live.delete(dead);
    browsers.live.add("fake-orphan");
    advance(1);
    await filler.tick();
    const { browsers: records } = (await store.read(org, pool.id))!;
    expect(records.map((record) => record.ref)).toContain(kept);
    expect(records.map((record) => record.ref)).not.toContain(dead);
    expect(records).toHaveLength(2);
    expect(browsers.destroyed).toEqual(["fake-orphan"]);
    expect(browsers.live.has("fake-orphan")).toBe(false);
  });

  it("trims idle browsers when a pool shrinks and launches none for a pool being deleted", async () => {
    const pool = await core.create(org, { size: 3, fill_rate_per_minute: 6000 });
    await filler.tick();
    await core.acquire(org, pool.id, 0);
    await core.update(org, pool.id, { size: 1 });
    await filler.tick();
    expect(await counts(pool.id)).toEqual([0, 1]);
    expect(browsers.live.size).toBe(1);

    await store.markDeleting(org, pool.id, clock.toISOString());
    await core.update(org, pool.id, { size: 3 });
    await filler.tick();
    expect(browsers.live.size).toBe(1);
  });
});
