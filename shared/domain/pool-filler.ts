import type { BrowserProvider } from "./browser-provider.ts";
import { newId } from "../ids.ts";
import { errorFields, log } from "../log.ts";
import { vetStartUrl, type Pool, type PooledBrowser, type PoolStore, type PoolWithBrowsers, type StartUrlAddressPolicy } from "./pool.ts";

export interface PoolFillerDeps {
  pools: PoolStore;
  browsers: BrowserProvider;
  /** Set in AWS mode; see `StartUrlAddressPolicy`. */
  startUrlAddresses?: StartUrlAddressPolicy;
  now?: () => Date;
  /** Launches at once across all pools: each Chromium start takes a core for a moment. */
  maxConcurrentLaunches?: number;
  /**
   * How often passes run. A pass may launch as many browsers as the fill rate allows over that
   * long (a second's worth at least), so a filler run once a minute keeps the rate a pool asked for.
   */
  passIntervalMs?: number;
}

/**
 * Keeps records and browsers in step, one pass at a time: forgets records of browsers that died,
 * ends browsers no record names (a previous run's leftovers included), reclaims leases past their
 * timeout, trims pools that shrank and fills every pool to its size at its fill rate. Passes must
 * not overlap: a browser being launched has no record yet.
 */
export function poolFiller(deps: PoolFillerDeps) {
  const clock = deps.now ?? (() => new Date());
  const maxLaunches = deps.maxConcurrentLaunches ?? 4;
  const burstMs = Math.max(1000, deps.passIntervalMs ?? 0);
  /** Launch allowance per pool: a token bucket refilled at `fill_rate_per_minute` percent of `size`. */
  const allowance = new Map<string, { tokens: number; at: number }>();

  function launchesAllowed(pool: Pool, at: number): number {
    const perMinute = (pool.size * pool.fill_rate_per_minute) / 100;
    const burst = Math.max(1, (perMinute * burstMs) / 60_000);
    const bucket = allowance.get(pool.id) ?? { tokens: burst, at };
    bucket.tokens = Math.min(burst, bucket.tokens + ((at - bucket.at) / 60_000) * perMinute);
    bucket.at = at;
    allowance.set(pool.id, bucket);
    return Math.floor(bucket.tokens);
  }

  async function end(removed: PooledBrowser | undefined): Promise<void> {
    if (removed) await deps.browsers.destroy(removed.ref);
  }

  /**
   * The pool's start URL if it passes the check now, else null (a blank page): the pool stays
   * usable, its browser's record shows no start URL, and the log says why. The create's check is
   * not enough: a host may resolve elsewhere by now, and the table may hold a start_url that the
   * policy refuses.
   */
  async function launchUrl(pool: Pool): Promise<string | null> {
    if (pool.start_url === null) return null;
    const verdict = await vetStartUrl(pool.start_url, deps.startUrlAddresses);
    if (verdict.outcome === "allowed") return verdict.url;
    log.warn("browser started blank: the pool's start_url was refused", { pool: pool.id, reason: verdict.reason });
    return null;
  }

  async function launchInto(pool: Pool): Promise<void> {
    const sessionId = newId("bs");
    const startUrl = await launchUrl(pool);
    const launched = await deps.browsers.launch({ sessionId, startUrl });
    const added = await deps.pools.addBrowser(pool.org, pool.id, {
      session_id: sessionId,
      state: "idle",
      ref: launched.ref,
      cdp_ws_url: launched.cdpWsUrl,
      created_at: clock().toISOString(),
      headless: launched.headless,
      start_url: startUrl === null ? null : pool.start_url,
      leased_at: null,
      lease_expires_at: null,
    });
    // The pool was deleted, or a delete began, while the browser started.
    if (!added) await deps.browsers.destroy(launched.ref);
  }

  async function tick(): Promise<void> {
    const pools = await deps.pools.listAll();
    const snapshots = (await Promise.all(pools.map((pool) => deps.pools.read(pool.org, pool.id)))).filter(
      (snapshot): snapshot is PoolWithBrowsers => snapshot !== undefined,
    );
    // Read after the records: a browser in this list with no record lost its record on purpose.
    const live = new Set(await deps.browsers.running());
    const recorded = new Set(snapshots.flatMap(({ browsers }) => browsers.map((browser) => browser.ref)));
    await Promise.all([...live].filter((ref) => !recorded.has(ref)).map((ref) => deps.browsers.destroy(ref)));

    const at = clock();
    const wanted: Pool[] = [];
    for (const { pool, browsers } of snapshots) {
      const dead = browsers.filter((browser) => !live.has(browser.ref));
      const expired = browsers.filter(
        (browser) => live.has(browser.ref) && browser.state === "leased" && browser.lease_expires_at !== null && new Date(browser.lease_expires_at) <= at,
      );
      const idle = browsers.filter((browser) => live.has(browser.ref) && browser.state === "idle");
      const alive = browsers.length - dead.length - expired.length;
      const surplus = idle.slice(0, Math.max(0, alive - pool.size));
      await Promise.all([
        ...dead.map((browser) => deps.pools.removeRunning(pool.org, pool.id, browser.session_id, browser.ref)),
        ...expired.map(async (browser) => {
          const removed = await deps.pools.removeLeased(pool.org, pool.id, browser.session_id, browser.leased_at as string);
          // Its client is cut cleanly before the browser goes; only after the record is gone, so no
          // later lease of the browser can be the one ended.
          if (removed) {
            await deps.browsers.endLease(removed.ref, removed.leased_at as string).catch((error: unknown) =>
              log.warn("an expired lease could not be ended before its browser was destroyed", { pool: pool.id, session: removed.session_id, ...errorFields(error) }),
            );
          }
          await end(removed);
        }),
        ...surplus.map(async (browser) => end(await deps.pools.removeIdle(pool.org, pool.id, browser.session_id))),
      ]);
      if (pool.deleting_since) continue;
      const launches = Math.min(pool.size - alive, launchesAllowed(pool, at.getTime()));
      for (let count = 0; count < launches; count++) wanted.push(pool);
    }
    for (const pool of allowance.keys()) {
      if (!snapshots.some((snapshot) => snapshot.pool.id === pool)) allowance.delete(pool);
    }

    await Promise.all(
      Array.from({ length: Math.min(maxLaunches, wanted.length) }, async () => {
        for (let pool = wanted.shift(); pool; pool = wanted.shift()) {
          const bucket = allowance.get(pool.id);
          if (bucket) bucket.tokens -= 1;
          await launchInto(pool).catch((error: unknown) =>
            log.warn("browser launch failed", { pool: pool.id, error: error instanceof Error ? error.message : String(error) }),
          );
        }
      }),
    );
  }

  return {
    tick,
    /**
     * One pass, unless another process's pass is under way: for a filler that may run in several
     * processes at once (the scheduled function). The claim lasts `maxPassMs` at most, so a process
     * that dies mid-pass holds it no longer. False when another pass held it.
     */
    async tickAlone(holder: string, maxPassMs: number): Promise<boolean> {
      const at = clock();
      if (!(await deps.pools.claimFillerPass(holder, at.toISOString(), new Date(at.getTime() + maxPassMs).toISOString()))) return false;
      try {
        await tick();
      } finally {
        await deps.pools.releaseFillerPass(holder);
      }
      return true;
    },
    /** Ends every browser this deployment runs; their records go on the next start's first pass. */
    async stopAll(): Promise<void> {
      await Promise.all((await deps.browsers.running()).map((ref) => deps.browsers.destroy(ref)));
    },
  };
}

export type PoolFiller = ReturnType<typeof poolFiller>;
