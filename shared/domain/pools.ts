import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { BrowserProvider } from "./browser-provider.ts";
import { newId } from "../ids.ts";
import { errorFields, log } from "../log.ts";
import { BadRequestError, ConflictError, NotFoundError, ServiceUnavailableError } from "./errors.ts";
import { findByIdOrName } from "./id-or-name.ts";
import {
  defaultAcquireWaitSeconds,
  defaultFillRatePerMinute,
  timeoutSecondsRange,
  toPoolResource,
  toSessionResource,
  type Pool,
  type PoolChanges,
  type PoolProfileRef,
  type PoolStore,
  type PooledBrowser,
  type PoolWithBrowsers,
  type SessionResource,
  type StartUrlAddressPolicy,
  vetStartUrl,
} from "./pool.ts";

export interface PoolsCoreDeps {
  pools: PoolStore;
  browsers: BrowserProvider;
  /** The id of the profile a pool names; throws NotFoundError when there is none. */
  resolveProfile(org: string, ref: PoolProfileRef): Promise<string>;
  /** Set in AWS mode; see `StartUrlAddressPolicy`. */
  startUrlAddresses?: StartUrlAddressPolicy;
  now?: () => Date;
  /** How often a waiting acquire looks for a browser that became idle. */
  acquirePollMilliseconds?: number;
}

export interface CreatePoolInput {
  name?: string;
  size: number;
  timeout_seconds?: number;
  fill_rate_per_minute?: number;
  headless?: boolean;
  start_url?: string;
  profile?: PoolProfileRef;
}

export interface UpdatePoolInput {
  name?: string;
  size?: number;
  timeout_seconds?: number;
  fill_rate_per_minute?: number;
  headless?: boolean;
  /** "" clears it. */
  start_url?: string;
  /** `{id: ""}` clears it. */
  profile?: PoolProfileRef;
  discard_all_idle?: boolean;
}

export function poolsCore(deps: PoolsCoreDeps) {
  const clock = deps.now ?? (() => new Date());
  const now = () => clock().toISOString();
  const pollMs = deps.acquirePollMilliseconds ?? 50;

  /** `{id_or_name}`: an id when it has the shape of one and exists, otherwise a name. */
  async function resolve(org: string, idOrName: string): Promise<PoolWithBrowsers> {
    const pool = await findByIdOrName(idOrName, "bp", { byId: (id) => deps.pools.read(org, id), idOfName: (name) => deps.pools.findByName(org, name) });
    if (!pool) throw new NotFoundError(`browser pool '${idOrName}' not found`);
    return pool;
  }

  async function nameConflict(org: string, name: string): Promise<never> {
    throw new ConflictError(`a browser pool named '${name}' already exists`, await deps.pools.findByName(org, name));
  }

  /**
   * Refuses a start URL the browsers must not open. A host that does not resolve yet passes: it
   * may be set up after the pool, and every launch checks the URL again.
   */
  async function checkStartUrl(startUrl: string): Promise<void> {
    const verdict = await vetStartUrl(startUrl, deps.startUrlAddresses);
    if (verdict.outcome === "refused") throw new BadRequestError(`start_url: ${verdict.reason}`, [{ code: "start_url", message: verdict.reason }]);
  }

  /** Deletes each idle record that is still idle, then ends its browser: a lease won the race otherwise. */
  async function destroyIdle({ pool, browsers }: PoolWithBrowsers): Promise<void> {
    await Promise.all(
      browsers
        .filter((browser) => browser.state === "idle")
        .map(async (browser) => {
          const removed = await deps.pools.removeIdle(pool.org, pool.id, browser.session_id);
          if (removed) await deps.browsers.destroy(removed.ref);
        }),
    );
  }

  /**
   * Gives a lease just written its token at the browser. A browser that cannot take it is no use to
   * anyone: its record goes and it is destroyed (the filler replaces it), and false lets the acquire
   * try another. The token lives only in this call and the acquire's answer.
   */
  async function grantToken(pool: Pool, leased: PooledBrowser, token: string, expiresAt: Date): Promise<boolean> {
    try {
      await deps.browsers.grantLease(leased.ref, { id: leased.leased_at as string, token, expiresAt });
      return true;
    } catch (error) {
      log.warn("a leased browser refused its token: destroying it", { pool: pool.id, session: leased.session_id, ...errorFields(error) });
      const removed = await deps.pools.removeLeased(pool.org, pool.id, leased.session_id, leased.leased_at as string);
      if (removed) await deps.browsers.destroy(removed.ref);
      return false;
    }
  }

  return {
    async create(org: string, input: CreatePoolInput) {
      if (input.start_url !== undefined) await checkStartUrl(input.start_url);
      const id = newId("bp");
      const createdAt = now();
      const pool: Pool = {
        id,
        org,
        name: input.name ?? id,
        created_at: createdAt,
        updated_at: createdAt,
        size: input.size,
        timeout_seconds: input.timeout_seconds ?? timeoutSecondsRange.fallback,
        fill_rate_per_minute: input.fill_rate_per_minute ?? defaultFillRatePerMinute,
        headless: input.headless ?? false,
        start_url: input.start_url ?? null,
        profile: input.profile ?? null,
        profile_id: input.profile ? await deps.resolveProfile(org, input.profile) : null,
      };
      if (!(await deps.pools.insert(pool))) await nameConflict(org, pool.name);
      return toPoolResource({ pool, browsers: [] });
    },

    async get(org: string, idOrName: string) {
      return toPoolResource(await resolve(org, idOrName));
    },

    async list(org: string, input: { limit: number; offset: number }) {
      const page = await deps.pools.list({ org, ...input });
      const snapshots = await Promise.all(page.items.map((pool) => deps.pools.read(org, pool.id)));
      const items = snapshots.filter((snapshot) => snapshot !== undefined).map(toPoolResource);
      return { items, hasMore: page.hasMore };
    },

    async update(org: string, idOrName: string, input: UpdatePoolInput) {
      const { pool } = await resolve(org, idOrName);
      const { discard_all_idle, profile, start_url, name, ...settings } = input;
      if (start_url) await checkStartUrl(start_url);
      const changes: PoolChanges = { ...settings };
      // The official client documents "" as a no-op for the name and as "clear" for these two.
      if (name) changes.name = name;
      if (start_url !== undefined) changes.start_url = start_url === "" ? null : start_url;
      if (profile !== undefined) {
        const clearing = profile.id === "" && profile.name === undefined;
        changes.profile = clearing ? null : profile;
        changes.profile_id = clearing ? null : await deps.resolveProfile(org, profile);
      }
      const result = await deps.pools.update(org, pool.id, changes, now());
      if (result.outcome === "missing") throw new NotFoundError(`browser pool '${idOrName}' not found`);
      if (result.outcome === "nameTaken") return nameConflict(org, changes.name as string);
      if (discard_all_idle) await destroyIdle(await resolve(org, pool.id));
      return toPoolResource(await resolve(org, pool.id));
    },

    /**
     * Marks the pool first, so the filler adds no browser this delete would not see; then ends
     * every browser (leased ones only with `force`) and removes the pool.
     */
    async remove(org: string, idOrName: string, force: boolean) {
      const { pool, browsers } = await resolve(org, idOrName);
      const leasedError = () => new ConflictError(`browser pool '${pool.name}' has leased browsers: release them first or delete with force`);
      if (!force && browsers.some((browser) => browser.state === "leased")) throw leasedError();
      if (!(await deps.pools.markDeleting(org, pool.id, now()))) throw new NotFoundError(`browser pool '${idOrName}' not found`);
      const marked = await resolve(org, pool.id);
      const removed = await Promise.all(
        marked.browsers.map(async (browser) => {
          const record = force
            ? await deps.pools.removeRunning(org, pool.id, browser.session_id, browser.ref)
            : await deps.pools.removeIdle(org, pool.id, browser.session_id);
          if (record) await deps.browsers.destroy(record.ref);
          return record !== undefined;
        }),
      );
      if (removed.includes(false)) {
        await deps.pools.unmarkDeleting(org, pool.id);
        throw leasedError();
      }
      await deps.pools.remove(org, pool.id);
    },

    /**
     * Leases an idle browser, waiting up to `waitSeconds` for one to become idle; undefined when
     * none did. The wait polls the pool's partition, so it works from any process (a Lambda too).
     */
    async acquire(org: string, idOrName: string, waitSeconds?: number): Promise<SessionResource | undefined> {
      let snapshot: PoolWithBrowsers | undefined = await resolve(org, idOrName);
      if (deps.browsers.unavailable) throw new ServiceUnavailableError(deps.browsers.unavailable);
      const deadline = Date.now() + (waitSeconds ?? defaultAcquireWaitSeconds(snapshot.pool)) * 1000;
      while (snapshot) {
        const { pool, browsers } = snapshot;
        const idle = browsers.filter((browser) => browser.state === "idle");
        // Start at a random idle browser, so concurrent acquires rarely contend for the same one.
        const start = Math.floor(Math.random() * idle.length);
        for (const candidate of [...idle.slice(start), ...idle.slice(0, start)]) {
          const leasedAt = clock();
          const expiresAt = new Date(leasedAt.getTime() + pool.timeout_seconds * 1000);
          const leased = await deps.pools.lease(org, pool.id, candidate.session_id, leasedAt.toISOString(), expiresAt.toISOString());
          if (!leased) continue;
          const token = randomBytes(32).toString("base64url");
          if (await grantToken(pool, leased, token, expiresAt)) return toSessionResource(pool, leased, token);
        }
        if (Date.now() >= deadline) return undefined;
        await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
        snapshot = await deps.pools.read(org, pool.id);
      }
      throw new NotFoundError(`browser pool '${idOrName}' not found`);
    },

    /**
     * `reuse` ends the lease at the browser (its client is cut, its token refused from then on) and
     * returns the browser to the pool; otherwise, or when the lease cannot be ended, the browser is
     * destroyed and the filler replaces it.
     */
    async release(org: string, idOrName: string, sessionId: string, reuse: boolean) {
      const { pool } = await resolve(org, idOrName);
      const browser = await deps.pools.getBrowser(org, pool.id, sessionId);
      const notLeased = () => new ConflictError(`browser session '${sessionId}' is not leased from browser pool '${pool.name}'`);
      if (!browser) throw new NotFoundError(`browser session '${sessionId}' is not a browser of pool '${pool.name}'`);
      if (browser.state !== "leased" || browser.leased_at === null) throw notLeased();
      const leaseEnded =
        reuse &&
        (await deps.browsers.endLease(browser.ref, browser.leased_at).then(
          () => true,
          (error: unknown) => {
            log.warn("a released browser's lease could not be ended: destroying it", { pool: pool.id, session: sessionId, ...errorFields(error) });
            return false;
          },
        ));
      if (leaseEnded) {
        if (!(await deps.pools.returnToPool(org, pool.id, sessionId, browser.leased_at))) throw notLeased();
        return;
      }
      const removed = await deps.pools.removeLeased(org, pool.id, sessionId, browser.leased_at);
      if (!removed) throw notLeased();
      await deps.browsers.destroy(removed.ref);
    },

    async flush(org: string, idOrName: string) {
      await destroyIdle(await resolve(org, idOrName));
    },
  };
}

export type PoolsCore = ReturnType<typeof poolsCore>;
