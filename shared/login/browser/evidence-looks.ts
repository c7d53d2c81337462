import type { Browser, BrowserContext } from "playwright-core";
import { Deadline } from "../../deadline.ts";
import { refusalOf } from "../kernel.ts";
import type { PageModel } from "../page.ts";
import { learnSessionEvidence, sessionCookieNames, unlearntEvidence } from "../session-evidence.ts";
import type { SessionEvidence } from "../types.ts";
import { navigate, navigationTimeoutMs } from "./chromium.ts";
import { discover } from "./discovery.ts";
import { settle, watchNetwork } from "./settle.ts";

/** The signed-in page as a second look shows it. */
export interface SignedInLook {
  model: PageModel;
  status: number;
}

/**
 * What tells the signed-in page at `url` from the same address without the session, as the
 * browser draws both: the page `context` shows now (`first`), `again()` (the same page loaded once
 * more with the session), and `url` in a fresh context of `browser`, loaded meanwhile. Used by the
 * login when it succeeds and by a health check given evidence that cannot tell. A page that cannot
 * be loaded again leaves less to learn, never an error.
 */
export async function learnInBrowser(options: {
  browser: Browser;
  context: BrowserContext;
  url: string;
  first: PageModel;
  again: () => Promise<SignedInLook>;
  identifiers: string[];
  settleMs: number;
}): Promise<SessionEvidence> {
  const { context, url } = options;
  const cookieNames = async (of: BrowserContext) => (await of.cookies(url)).map((cookie) => cookie.name);
  const afterFirst = await cookieNames(context);
  const [anonymous, again] = await Promise.all([
    lookWithoutSession(options.browser, url, options.settleMs).catch(() => null),
    options.again().catch(() => null),
  ]);
  if (!again || again.status >= 400) return unlearntEvidence();
  return learnSessionEvidence({
    signedIn: [options.first, again.model],
    // An error page without the session (a rate limit, an outage) is nothing to compare with.
    anonymous: anonymous && (anonymous.refused || anonymous.status < 400) ? { model: anonymous.model, refused: anonymous.refused } : null,
    identifiers: options.identifiers,
    sessionCookies: sessionCookieNames({ afterFirst, afterSecond: await cookieNames(context), anonymous: anonymous?.cookies ?? [] }),
  });
}

/** `url` loaded and settled in a fresh context (no cookies, no storage), as a visitor without the session sees it. */
async function lookWithoutSession(browser: Browser, url: string, settleMs: number) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const network = watchNetwork(page);
    const response = await navigate(page, url, { timeoutMs: navigationTimeoutMs });
    await settle(page, network, Deadline.in(settleMs));
    const found = await discover(page, null, []);
    const status = response?.status() ?? 200;
    // What a visitor without a session gets: 401/403, a redirect to a login page, or a password form.
    const refused = refusalOf({ status, url: page.url(), body: found.html }, found.model, url) !== null;
    return { model: found.model, status, refused, cookies: (await context.cookies(url)).map((cookie) => cookie.name) };
  } finally {
    await context.close();
  }
}
