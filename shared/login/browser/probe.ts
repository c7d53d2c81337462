import type { Browser, Page, Response } from "playwright-core";
import type { StorageState } from "../../archive/storage-state.ts";
import { isTimeout } from "./chromium.ts";
import { hasPasswordForm, isLoginUrl } from "../forms.ts";
import { parsePage } from "../page.ts";
import { hostOf, isWithin } from "../scope.ts";
import { judgeWithEvidence, type SessionEvidence } from "../session-evidence.ts";
import type { LoginTarget, ProbeOutcome } from "../types.ts";
import { openContextWithState } from "./browser-state.ts";
import { snapshotDom } from "./dom-snapshot.ts";

export interface OpenedBrowser {
  browser: Browser;
  /** Ends the browser and whatever the opener started with it (its proxy, its directory). */
  close(): Promise<void>;
}

/** A browser whose every request meets the target's network policy. */
export type OpenBrowser = (target: LoginTarget) => Promise<OpenedBrowser>;

const navigationTimeoutMs = 15_000;
/**
 * How long the page may take to fall quiet after it loads: long enough for a single-page app to ask
 * its API with the stored token, bounded for pages that never stop talking (polling, analytics).
 */
const settleTimeoutMs = 5_000;

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

/** Why `goto` failed when the site could not be asked, or null for a failure of the browser itself. */
function unreachableReason(error: unknown, url: URL): string | null {
  if (isTimeout(error)) return `${url.host} did not load ${url.pathname} within ${navigationTimeoutMs} ms`;
  const netError = error instanceof Error ? /net::ERR_[A-Z_]+/.exec(error.message) : null;
  return netError ? `${url.host} could not be reached (${netError[0]})` : null;
}

async function settle(page: Page): Promise<void> {
  try {
    await page.waitForLoadState("networkidle", { timeout: settleTimeoutMs });
  } catch (error) {
    // A page that keeps a connection busy is judged as it stands.
    if (!isTimeout(error)) throw error;
  }
}

/**
 * The browser counterpart of the HTTP probe: opens `postLoginUrl` with the saved state (cookies,
 * localStorage, IndexedDB, sessionStorage) and judges the settled page the same way. Many single-page
 * apps draw their signed-in shell from a token in storage before any server accepted it, so a 401 or
 * 403 from the site's own API while the page loads means logged out, whatever the page shows.
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
    const requested = new URL(postLoginUrl);
    const refusedCall = watchRefusedCalls(page, target);
    const cookiesBefore = new Set((await context.cookies(postLoginUrl)).map((cookie) => cookie.name));
    let response: Response | null;
    try {
      response = await page.goto(postLoginUrl, { waitUntil: "load", timeout: navigationTimeoutMs });
    } catch (error) {
      const reason = unreachableReason(error, requested);
      if (reason) return { state: "unreachable", reason };
      throw error;
    }
    const status = response?.status() ?? 200;
    if (status >= 500) return { state: "unreachable", reason: `the site answered HTTP ${status}` };
    // A rate limit says nothing about the session: its state is unknown, not lost.
    if (status === 429 || (status >= 400 && (await response?.headerValue("retry-after")) != null)) {
      return { state: "unreachable", reason: `the site is limiting requests (HTTP ${status})` };
    }
    if (status === 401 || status === 403) return { state: "logged_out", reason: `the site answered HTTP ${status}` };
    await settle(page);
    const call = refusedCall();
    if (call) return { state: "logged_out", reason: `the site's API answered ${call} while the page loaded` };
    if (page.url() !== requested.href && isLoginUrl(page.url())) {
      return { state: "logged_out", reason: `redirected to the login page ${new URL(page.url()).pathname}` };
    }
    const model = parsePage((await snapshotDom(page, 0)).html, page.url());
    if (hasPasswordForm(model)) return { state: "logged_out", reason: "the page asks for a password" };
    // Nor does a 404 or another error answer: post_login_url may have moved.
    if (status >= 400) return { state: "unreachable", reason: `the site answered HTTP ${status} for ${requested.pathname}, which may have moved` };
    if (evidence === null) return { state: "logged_in" };
    const cookiesAfter = new Set((await context.cookies(postLoginUrl)).map((cookie) => cookie.name));
    const deleted = evidence.sessionCookies.find((name) => cookiesBefore.has(name) && !cookiesAfter.has(name));
    if (deleted) return { state: "logged_out", reason: `the site deleted the session cookie ${deleted}` };
    return judgeWithEvidence(evidence, () => model);
  } finally {
    await opened.close();
  }
}
