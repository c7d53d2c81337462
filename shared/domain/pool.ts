import { vetHost, type HostVerdict, type Resolver } from "../policy/addresses.ts";
import { hostOf } from "../policy/scope.ts";
import type { Page } from "./list-page.ts";

export type BrowserState = "idle" | "leased";

/** The pool's profile as the caller named it (echoed back); `profile_id` holds what it resolved to. */
export interface PoolProfileRef {
  id?: string;
  name?: string;
}

/** What a user sets on create and may change with PATCH. */
export interface PoolSettings {
  size: number;
  /** Seconds a lease lasts, counted from the acquire, before the browser is reclaimed. */
  timeout_seconds: number;
  /** Percent of `size` launched per minute while the pool is short of browsers. */
  fill_rate_per_minute: number;
  headless: boolean;
  start_url: string | null;
  profile: PoolProfileRef | null;
  profile_id: string | null;
}

export interface Pool extends PoolSettings {
  id: string;
  org: string;
  name: string;
  created_at: string;
  updated_at: string;
  /** Set while a delete runs, so the filler adds no browser the delete would not see. */
  deleting_since?: string;
}

export interface PooledBrowser {
  session_id: string;
  state: BrowserState;
  /** The provider's handle on the running browser (a process locally, a container task in AWS). */
  ref: string;
  cdp_ws_url: string;
  created_at: string;
  headless: boolean;
  start_url: string | null;
  leased_at: string | null;
  lease_expires_at: string | null;
}

export interface PoolWithBrowsers {
  pool: Pool;
  browsers: PooledBrowser[];
}

export const timeoutSecondsRange = { min: 10, max: 259_200, fallback: 600 } as const;

/** Largest pool: locally every browser is a Chromium process tree on the service's own machine. */
export const maxPoolSize = 50;

/**
 * The longest an acquire waits: API Gateway ends every request at 29 s, so a longer wait would
 * answer 504 rather than 204.
 */
export const maxAcquireWaitSeconds = 25;

/** Kernel's default wait: the time the pool takes to fill at its fill rate, within the limit above. */
export function defaultAcquireWaitSeconds(pool: Pool): number {
  return Math.min(maxAcquireWaitSeconds, Math.ceil(6000 / pool.fill_rate_per_minute));
}

/**
 * Percent of the pool per minute. Kernel's default is 25, made for container start-up costs; a
 * local Chromium starts far faster, so a pool fills in seconds rather than minutes.
 */
export const defaultFillRatePerMinute = 2000;

/** Web pages, and Chromium's own pages: the official client documents chrome:// ones as start pages. */
const startUrlSchemes = ["http:", "https:", "about:", "chrome:"];

/**
 * AWS mode's rule for an http(s) start URL: its host must resolve only to addresses the login
 * engine may reach. Local mode has none: its browsers run on the owner's own machine.
 */
export interface StartUrlAddressPolicy {
  allowPrivateTargets: boolean;
  resolve: Resolver;
}

export type StartUrlVerdict = { outcome: "allowed"; url: string } | Exclude<HostVerdict, { outcome: "allowed" }>;

/**
 * Whether a pool's browsers may start at `startUrl`; `url` is the parsed form, so a browser starts
 * at the very address that was checked. The check cannot pin the browser's own DNS lookup.
 */
export async function vetStartUrl(startUrl: string, addressPolicy: StartUrlAddressPolicy | undefined): Promise<StartUrlVerdict> {
  const url = URL.parse(startUrl);
  if (!url) return { outcome: "refused", reason: "must be a URL" };
  if (!startUrlSchemes.includes(url.protocol)) {
    return { outcome: "refused", reason: `the scheme '${url.protocol}' is not allowed: use ${startUrlSchemes.join(", ")}` };
  }
  if (!addressPolicy || (url.protocol !== "http:" && url.protocol !== "https:")) return { outcome: "allowed", url: url.href };
  const verdict = await vetHost(hostOf(url), addressPolicy, addressPolicy.resolve);
  return verdict.outcome === "allowed" ? { outcome: "allowed", url: url.href } : verdict;
}

export function toPoolResource({ pool, browsers }: PoolWithBrowsers) {
  return {
    id: pool.id,
    name: pool.name,
    created_at: pool.created_at,
    available_count: browsers.filter((browser) => browser.state === "idle").length,
    acquired_count: browsers.filter((browser) => browser.state === "leased").length,
    browser_pool_config: {
      name: pool.name,
      size: pool.size,
      timeout_seconds: pool.timeout_seconds,
      fill_rate_per_minute: pool.fill_rate_per_minute,
      headless: pool.headless,
      ...(pool.start_url === null ? {} : { start_url: pool.start_url }),
      ...(pool.profile === null ? {} : { profile: pool.profile }),
    },
    extension_ids: [] as string[],
    ...(pool.profile_id === null ? {} : { profile_id: pool.profile_id }),
  };
}

export type PoolResource = ReturnType<typeof toPoolResource>;

/**
 * The acquire answer, the only place the lease's token appears: in `cdp_ws_url`, as the browser's
 * proxy expects it. `webdriver_ws_url` is required by the official client's type, but no provider
 * here runs a WebDriver BiDi endpoint: it is the empty string.
 */
export function toSessionResource(pool: Pool, browser: PooledBrowser, token: string) {
  const cdpWsUrl = new URL(browser.cdp_ws_url);
  cdpWsUrl.searchParams.set("token", token);
  return {
    session_id: browser.session_id,
    cdp_ws_url: cdpWsUrl.href,
    webdriver_ws_url: "",
    created_at: browser.created_at,
    headless: browser.headless,
    stealth: false,
    timeout_seconds: pool.timeout_seconds,
    pool: { id: pool.id, name: pool.name },
    ...(browser.start_url === null ? {} : { start_url: browser.start_url }),
  };
}

export type SessionResource = ReturnType<typeof toSessionResource>;

export type PoolUpdateOutcome = { outcome: "updated"; pool: Pool } | { outcome: "nameTaken" } | { outcome: "missing" };

export type PoolChanges = Partial<PoolSettings> & { name?: string };

/** Each method that changes a browser names, in its adapter, the condition that guards it. */
export interface PoolStore {
  /** Writes the pool and its name guard together; false when the name is taken. */
  insert(pool: Pool): Promise<boolean>;
  findByName(org: string, name: string): Promise<string | undefined>;
  /** The pool and every browser of it, in one read. */
  read(org: string, id: string): Promise<PoolWithBrowsers | undefined>;
  list(request: { org: string; offset: number; limit: number }): Promise<Page<Pool>>;
  /** Every org's pools: the filler's work list. */
  listAll(): Promise<Pool[]>;
  update(org: string, id: string, changes: PoolChanges, now: string): Promise<PoolUpdateOutcome>;
  /** False when the pool does not exist. */
  markDeleting(org: string, id: string, now: string): Promise<boolean>;
  unmarkDeleting(org: string, id: string): Promise<void>;
  /** Removes the pool and its name guard; its browsers must be gone already. */
  remove(org: string, id: string): Promise<void>;
  /** Records a newly launched idle browser; false when the pool is gone or being deleted. */
  addBrowser(org: string, poolId: string, browser: PooledBrowser): Promise<boolean>;
  getBrowser(org: string, poolId: string, sessionId: string): Promise<PooledBrowser | undefined>;
  /** idle -> leased; undefined when the browser is not idle (any more). */
  lease(org: string, poolId: string, sessionId: string, leasedAt: string, expiresAt: string): Promise<PooledBrowser | undefined>;
  /** leased -> idle, only for the lease that started at `leasedAt`; false when that lease is over. */
  returnToPool(org: string, poolId: string, sessionId: string, leasedAt: string): Promise<boolean>;
  /** Deletes the record only while the browser is idle; the deleted record, or undefined. */
  removeIdle(org: string, poolId: string, sessionId: string): Promise<PooledBrowser | undefined>;
  /** Deletes the record only while it is leased by the lease that started at `leasedAt`. */
  removeLeased(org: string, poolId: string, sessionId: string, leasedAt: string): Promise<PooledBrowser | undefined>;
  /** Deletes the record, whatever its state, while it still names the running browser `ref`. */
  removeRunning(org: string, poolId: string, sessionId: string, ref: string): Promise<PooledBrowser | undefined>;
  /** Claims the filler's pass for `holder` until `until`; false while another holder's claim lasts. */
  claimFillerPass(holder: string, now: string, until: string): Promise<boolean>;
  /** Gives the pass up, if `holder` still holds it. */
  releaseFillerPass(holder: string): Promise<void>;
}
