import { randomBytes } from "node:crypto";
import { beforeEach, describe, expect, inject, it } from "vitest";
import type { BrowserProvider, LeaseGrant } from "#shared/domain/browser-provider.ts";
import { poolFiller } from "#shared/domain/pool-filler.ts";
import { poolsCore } from "#shared/domain/pools.ts";
import { dynamoPoolStore } from "#shared/store/pools-store.ts";
import { ensureTable } from "../../infra/local/dynamodb-local.ts";
import { tableClientAt } from "../support/stack.ts";

const org = "org-filler";

/** Browsers as entries in a set: what runs is what the test says runs, and which leases it admits. */
function fakeBrowsers() {
  const live = new Set<string>();
  const destroyed: string[] = [];
  const leases = new Map<string, LeaseGrant>();
  const endedLeases: string[] = [];
  /** Browsers whose lease calls fail, as a browser whose proxy does not answer. */
  const unreachable = new Set<string>();
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
    async grantLease(ref, lease) {
      if (unreachable.has(ref)) throw new Error("the browser's proxy does not answer");
      leases.set(ref, lease);
    },
    async endLease(ref, leaseId) {
      if (unreachable.has(ref)) throw new Error("the browser's proxy does not answer");
      // As the browsers' proxy does: a lease ended late leaves a later one alone.
      if (leases.get(ref)?.id !== leaseId) return;
      leases.delete(ref);
      endedLeases.push(ref);
    },
  };
  return { provider, live, destroyed, leases, endedLeases, unreachable };
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

  it("launches a whole interval's worth of the fill rate in each pass when it runs once a minute, as in AWS", async () => {
    const minutely = poolFiller({ pools: store, browsers: browsers.provider, now: () => clock, passIntervalMs: 60_000 });
    // 50 % of 20 per minute is 10 a minute: a filler passing every second would launch one a pass.
    const pool = await core.create(org, { size: 20, fill_rate_per_minute: 50 });
    await minutely.tick();
    expect(await counts(pool.id)).toEqual([10, 0]);
    await minutely.tick();
    expect(await counts(pool.id)).toEqual([10, 0]);
    advance(60);
    await minutely.tick();
    expect(await counts(pool.id)).toEqual([20, 0]);
  });

  it("runs one pass at a time across processes: a claimed pass is skipped until it ends or its claim lapses", async () => {
    const pool = await core.create(org, { size: 1, fill_rate_per_minute: 6000 });
    expect(await store.claimFillerPass("another run", clock.toISOString(), new Date(clock.getTime() + 60_000).toISOString())).toBe(true);

    expect(await filler.tickAlone("this run", 300_000)).toBe(false);
    expect(await counts(pool.id)).toEqual([0, 0]);

    advance(60);
    expect(await filler.tickAlone("this run", 300_000)).toBe(true);
    expect(await counts(pool.id)).toEqual([1, 0]);
    // The pass gave its claim up as it ended.
    expect(await store.claimFillerPass("a later run", clock.toISOString(), new Date(clock.getTime() + 60_000).toISOString())).toBe(true);
    await store.releaseFillerPass("a later run");
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
    expect(browsers.endedLeases).toEqual([leasedRef]);
    expect(browsers.destroyed).toEqual([leasedRef]);
    expect(await counts(pool.id)).toEqual([1, 0]);
    await expect(core.release(org, pool.id, session?.session_id as string, true)).rejects.toMatchObject({ code: "not_found" });
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

describe("lease tokens", () => {
  const tokenOf = (cdpWsUrl: string) => new URL(cdpWsUrl).searchParams.get("token") as string;

  it("grants each lease a fresh token at the browser, answers it in cdp_ws_url only, and ends it on a release with reuse", async () => {
    const pool = await core.create(org, { size: 1, timeout_seconds: 60, fill_rate_per_minute: 6000 });
    await filler.tick();
    const [ref] = [...browsers.live] as [string];

    const first = await core.acquire(org, pool.id, 0);
    const token = tokenOf(first?.cdp_ws_url as string);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(browsers.leases.get(ref)).toEqual({ id: clock.toISOString(), token, expiresAt: new Date(clock.getTime() + 60_000) });
    expect(JSON.stringify(await store.read(org, pool.id))).not.toContain(token);

    await core.release(org, pool.id, first?.session_id as string, true);
    expect(browsers.endedLeases).toEqual([ref]);
    expect(browsers.leases.has(ref)).toBe(false);
    expect(await counts(pool.id)).toEqual([1, 0]);

    const second = await core.acquire(org, pool.id, 0);
    expect(second?.session_id).toBe(first?.session_id);
    expect(tokenOf(second?.cdp_ws_url as string)).not.toBe(token);
    expect(browsers.leases.get(ref)?.token).toBe(tokenOf(second?.cdp_ws_url as string));
  });

  it("destroys a browser that cannot take its token and leases another", async () => {
    const pool = await core.create(org, { size: 2, fill_rate_per_minute: 6000 });
    await filler.tick();
    const [broken, working] = [...browsers.live] as [string, string];
    browsers.unreachable.add(broken);

    // Whichever the first acquire tries first, the two together try both browsers.
    const sessions = [await core.acquire(org, pool.id, 0), await core.acquire(org, pool.id, 0)].filter((session) => session !== undefined);

    expect(sessions).toHaveLength(1);
    expect(browsers.leases.get(working)?.token).toBe(tokenOf(sessions[0]?.cdp_ws_url as string));
    expect(browsers.destroyed).toEqual([broken]);
    expect(await counts(pool.id)).toEqual([0, 1]);
  });

  it("destroys, rather than returns to the pool, a released browser whose lease cannot be ended", async () => {
    const pool = await core.create(org, { size: 1, fill_rate_per_minute: 6000 });
    await filler.tick();
    const [ref] = [...browsers.live] as [string];
    const session = await core.acquire(org, pool.id, 0);
    browsers.unreachable.add(ref);

    await core.release(org, pool.id, session?.session_id as string, true);

    expect(browsers.destroyed).toEqual([ref]);
    expect(await counts(pool.id)).toEqual([0, 0]);
  });
});
