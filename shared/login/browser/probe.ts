import type { Browser, Page, Response } from "playwright-core";
import type { StorageState } from "../../archive/storage-state.ts";
import { pathOf, refusalOf } from "../kernel.ts";
import { parsePage, type PageModel } from "../page.ts";
import { judgeProbe, withSessionLeft } from "../probe-verdict.ts";
import { hostOf, isWithin } from "../../policy/scope.ts";
import type { SessionEvidence } from "../types.ts";
import type { LoginTarget, ProbeOutcome } from "../types.ts";
import { captureBrowserState, openContextWithState } from "./browser-state.ts";
import { navigate, NavigationError, reload, unreachableReason } from "./chromium.ts";
import { snapshotDom } from "./dom-snapshot.ts";
import { learnInBrowser } from "./evidence-looks.ts";
import { Deadline } from "../../deadline.ts";
import { settle, watchNetwork } from "./settle.ts";

export interface OpenedBrowser {
  browser: Browser;
  /**
   * What the network policy refused so far, as `host:port: reason` (the proxy's list); absent where
   * no proxy stands in front of the browser.
   */
  refused?(): string[];
  /** Ends the browser and whatever the opener started with it (its proxy, its directory). */
  close(): Promise<void>;
}

/** A browser whose every request meets the target's network policy. */
export type OpenBrowser = (target: LoginTarget) => Promise<OpenedBrowser>;

/**
 * How long the page may take to fall quiet after it loads: long enough for a single-page app to ask
 * its API with the stored token, bounded for pages that never stop talking (polling, analytics).
 */
const settleBudgetMs = 5_000;

/** The first call of the page to its own site that the site refused, as `HTTP 401 for /api/me`. */
function watchRefusedCalls(page: Page, target: LoginTarget): () => string | null {
  let refused: string | null = null;
  page.on("response", (response: Response) => {
    if (refused !== null || (response.status() !== 401 && response.status() !== 403)) return;
    const type = response.request().resourceType();
    if (type !== "fetch" && type !== "xhr") return;
    const url = new URL(response.url());
    if (isWithin(hostOf(url), target.domain.toLowerCase())) refused = `HTTP ${response.status()} for ${url.pathname}`;
  });
  return () => refused;
}

/**
 * The browser counterpart of the HTTP probe: opens `postLoginUrl` with the saved state (cookies,
 * localStorage, IndexedDB, sessionStorage) and judges the settled page the same way. Many single-page
 * apps draw their signed-in shell from a token in storage before any server accepted it, so a 401 or
 * 403 from the site's own API while the page loads means logged out, whatever the page shows. Given
 * evidence that cannot tell (an HTTP login's app shell, the same served with and without the session),
 * it learns what the page as drawn by its script shows signed in, for this check and the later ones.
 */
export async function probeInBrowser(
  openBrowser: OpenBrowser,
  target: LoginTarget,
  session: StorageState,
  postLoginUrl: string,
  evidence: SessionEvidence | null,
): Promise<ProbeOutcome> {
  const opened = await openBrowser(target);
  try {
    const context = await openContextWithState(opened.browser, session);
    const page = await context.newPage();
    const network = watchNetwork(page);
    const refusedCall = watchRefusedCalls(page, target);
    const cookieNames = async () => new Set((await context.cookies(postLoginUrl)).map((cookie) => cookie.name));
    const cookiesBefore = await cookieNames();
    let response: Response | null;
    try {
      response = await navigate(page, postLoginUrl, { waitUntil: "load" });
    } catch (error) {
      const reason = error instanceof NavigationError ? unreachableReason(error) : null;
      if (reason) return { state: "unreachable", reason };
      throw error;
    }
    const look = async () => {
      await settle(page, network, Deadline.in(settleBudgetMs));
      const { html } = await snapshotDom(page, 0);
      return { html, model: parsePage(html, page.url()) };
    };
    let rendered: Promise<{ html: string; model: PageModel }> | undefined;
    const render = () => (rendered ??= look());
    const status = response?.status() ?? 200;
    const verdict = await judgeProbe(
      {
        status,
        retryAfter: (await response?.headerValue("retry-after")) != null,
        requestedPath: pathOf(postLoginUrl),
        async signedOutSign() {
          // The site's own 401 or 403 needs no settled page.
          if (status === 401 || status === 403) return refusalOf({ status, url: page.url(), body: "" }, null, postLoginUrl);
          const { html, model } = await render();
          const call = refusedCall();
          if (call) return `the site's API answered ${call} while the page loaded`;
          return refusalOf({ status, url: page.url(), body: html }, model, postLoginUrl);
        },
        async deletedCookie(names) {
          const cookiesAfter = await cookieNames();
          return names.find((name) => cookiesBefore.has(name) && !cookiesAfter.has(name)) ?? null;
        },
        model: async () => (await render()).model,
        engine: "browser",
        async learn() {
          const first = (await render()).model;
          return learnInBrowser({
            browser: opened.browser,
            context,
            url: page.url(),
            first,
            async again() {
              const reloaded = await reload(page);
              return { model: (await look()).model, status: reloaded?.status() ?? 200 };
            },
            // A check knows no identifier: what it learns is the page's own signs, not the account's name.
            identifiers: [],
            settleMs: settleBudgetMs,
          });
        },
      },
      evidence,
    );
    // What the app renewed while it loaded (a rotated token, a sliding expiry) is in the browser now.
    return await withSessionLeft(verdict, () => captureBrowserState(context));
  } finally {
    await opened.close();
  }
}
