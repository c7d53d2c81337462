/**
 * Where pooled browsers run. A browser is known by its `ref`, an opaque string the provider makes
 * at launch and the pool stores with the browser's record, so any process (a Lambda, the local
 * runtime, a restarted one) can find the browser again. Locally a browser is a Chromium process;
 * in AWS it will be a container task, behind the same calls. A browser admits a DevTools client
 * only with the token of its current lease, which the pool grants at acquire and ends at release.
 */
export interface BrowserProvider {
  /** Set when this deployment cannot run browsers: the reason, which acquire answers with 503. */
  readonly unavailable?: string;
  launch(spec: LaunchSpec): Promise<LaunchedBrowser>;
  /** Ends the browser and frees what it held; a browser already gone is not an error. */
  destroy(ref: string): Promise<void>;
  /** The refs of every live browser this deployment runs, including any a previous run left behind. */
  running(): Promise<string[]>;
  /**
   * From now until `expiresAt` (or `endLease`), the browser admits a DevTools client that presents
   * `token`, and no other: a client of an earlier lease is cut, and the browser is reset as
   * `endLease` does before the new holder gets it. The provider keeps no copy of the token.
   */
  grantLease(ref: string, lease: LeaseGrant): Promise<void>;
  /**
   * Ends lease `leaseId` if it is still the browser's current one, cuts its open clients and leaves
   * one fresh page at the start URL, every other page closed (cookies and storage stay). A lease
   * already ended, even one replaced since, and a browser already gone are not errors: a late
   * release must not end the lease that followed.
   */
  endLease(ref: string, leaseId: string): Promise<void>;
}

/** A lease as the pool grants it; `id` names it (the pool uses its `leased_at`). */
export interface LeaseGrant {
  id: string;
  token: string;
  expiresAt: Date;
}

export interface LaunchSpec {
  sessionId: string;
  startUrl: string | null;
}

export interface LaunchedBrowser {
  ref: string;
  cdpWsUrl: string;
  /** What the browser really runs as, whatever the pool asked for. */
  headless: boolean;
}

/** The provider of a deployment with no way to run browsers yet (AWS, until container tasks land). */
export function unavailableBrowsers(reason: string): BrowserProvider {
  return {
    unavailable: reason,
    async launch() {
      throw new Error(reason);
    },
    async destroy() {},
    async running() {
      return [];
    },
    async grantLease() {
      throw new Error(reason);
    },
    async endLease() {
      throw new Error(reason);
    },
  };
}
