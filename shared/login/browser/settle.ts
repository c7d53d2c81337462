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
  return {
    async quiet(deadline) {
      while (!deadline.passed && (open.size > 0 || Date.now() - lastChange < networkQuietMs)) {
        await deadline.sleep(pollMs);
      }
    },
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

declare class MutationObserver {
  constructor(callback: () => void);
  observe(target: unknown, options: { subtree: boolean; childList: boolean; attributes: boolean; characterData: boolean }): void;
  disconnect(): void;
}
declare const document: unknown;

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
