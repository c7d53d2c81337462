import type { Page, Request } from "playwright-core";
import type { Deadline } from "../../deadline.ts";

/**
 * Waiting for a page to finish what it started (a load, a script's requests, a framework's render)
 * without a fixed pause: the network quiet for a moment, then the DOM quiet for a moment, each
 * bounded, since a page may poll or animate for ever.
 */

/** Requests that stay open by design: they never go quiet. */
const longLived = new Set(["eventsource", "websocket", "ping"]);
const networkQuietMs = 250;
const domQuietMs = 150;
const pollMs = 50;

export interface NetworkWatch {
  /** Resolves once no request has been open for a moment, or at the deadline. */
  quiet(deadline: Deadline): Promise<void>;
  /** A request is open, or one started or ended a moment ago: the page is still talking to its site. */
  busy(): boolean;
}

/** Counts the page's open requests from now on. */
export function watchNetwork(page: Page): NetworkWatch {
  const open = new Set<Request>();
  let lastChange = Date.now();
  const opened = (request: Request) => {
    if (longLived.has(request.resourceType())) return;
    open.add(request);
    lastChange = Date.now();
  };
  const closed = (request: Request) => {
    if (open.delete(request)) lastChange = Date.now();
  };
  page.on("request", opened);
  page.on("requestfinished", closed);
  page.on("requestfailed", closed);
  const busy = () => open.size > 0 || Date.now() - lastChange < networkQuietMs;
  return {
    async quiet(deadline) {
      while (!deadline.passed && busy()) await deadline.sleep(pollMs);
    },
    busy,
  };
}

/** The page loaded, its requests done and its DOM still, or the deadline come. */
export async function settle(page: Page, network: NetworkWatch, deadline: Deadline): Promise<void> {
  // At least 1 ms: Playwright reads 0 as no limit.
  const left = () => Math.max(1, deadline.remainingMs());
  // A page still loading, or navigated away meanwhile, is judged as it is at the deadline.
  await page.waitForLoadState("load", { timeout: left() }).catch(() => undefined);
  await network.quiet(deadline);
  await page.evaluate(waitForQuietDom, { quietMs: domQuietMs, maxMs: left() }).catch(() => undefined);
}

/**
 * A watch on the page's document from the moment it starts, so a change made while the engine reads
 * the page (its snapshot) is not missed by a wait that begins after the read.
 */
export interface DomWatch {
  /**
   * Resolves true once the document has changed since the watch began (at once if it already has) or
   * the page has left it, false when `ms` of the page's own time pass without a change: the wait
   * starts when the page can run it, so a page busy with its script gets its `ms` afterwards. Never
   * waits past `deadline`.
   */
  changed(ms: number, deadline: Deadline): Promise<boolean>;
  /** Ends the watch, and a wait on it (false). */
  stop(): Promise<void>;
}

/** Starts watching the page's document for any change but the engine's own `ownAttribute` marks. */
export async function watchDom(page: Page, ownAttribute: string): Promise<DomWatch> {
  const watch = await page.evaluateHandle(startDomWatch, ownAttribute).catch(() => null);
  // The document went away while the watch started: the page changed.
  if (!watch) return { changed: async () => true, stop: async () => undefined };
  return {
    async changed(ms, deadline) {
      const inPage = watch.evaluate((started, waitMs) => started.wait(waitMs), Math.min(ms, deadline.remainingMs())).catch(() => true);
      // A page whose script never yields would hold the in-page wait for ever: the deadline holds.
      return deadline.race(inPage, false);
    },
    async stop() {
      await watch.evaluate((started) => started.stop()).catch(() => undefined);
      await watch.dispose().catch(() => undefined);
    },
  };
}

interface MutationRecord {
  type: string;
  attributeName: string | null;
}
declare class MutationObserver {
  constructor(callback: (records: MutationRecord[]) => void);
  observe(target: unknown, options: { subtree: boolean; childList: boolean; attributes: boolean; characterData: boolean }): void;
  disconnect(): void;
}
declare const document: unknown;

/** Runs in the page: it may use nothing from this module (Playwright sends its source). */
function startDomWatch(ownAttribute: string) {
  let changed = false;
  let wake: ((value: boolean) => void) | null = null;
  const observer = new MutationObserver((records) => {
    if (records.every((record) => record.type === "attributes" && record.attributeName === ownAttribute)) return;
    changed = true;
    observer.disconnect();
    wake?.(true);
  });
  observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  return {
    wait(ms: number): Promise<boolean> {
      if (changed || ms <= 0) return Promise.resolve(changed);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => settleWith(false), ms);
        function settleWith(value: boolean) {
          clearTimeout(timer);
          wake = null;
          resolve(value);
        }
        wake = settleWith;
      });
    },
    stop() {
      observer.disconnect();
      wake?.(false);
    },
  };
}

/** Runs in the page: resolves once nothing in the document changed for `quietMs`, or after `maxMs`. */
function waitForQuietDom({ quietMs, maxMs }: { quietMs: number; maxMs: number }): Promise<void> {
  return new Promise((resolve) => {
    let quietTimer = setTimeout(done, quietMs);
    const cap = setTimeout(done, maxMs);
    const observer = new MutationObserver(() => {
      clearTimeout(quietTimer);
      quietTimer = setTimeout(done, quietMs);
    });
    observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    function done() {
      observer.disconnect();
      clearTimeout(quietTimer);
      clearTimeout(cap);
      resolve();
    }
  });
}
