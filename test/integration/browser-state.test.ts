import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionArchive } from "#shared/archive/session-archive.ts";
import type { StorageState } from "#shared/archive/storage-state.ts";
import { readZstdStorageState } from "#shared/archive/validate.ts";
import { captureBrowserState, openContextWithState } from "#shared/login/browser/browser-state.ts";
import { probeInBrowser } from "#shared/login/browser/probe.ts";
import type { SessionEvidence } from "#shared/login/types.ts";
import type { LoginTarget } from "#shared/login/types.ts";
import { handlerClock, serveRoutes } from "../sites/site-http.ts";
import { startStoredSessionSite, type StoredSession, type StoredSessionSite } from "../sites/stored-session-site.ts";
import { aProfileManifest } from "../support/archive-builders.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";

let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let site: StoredSessionSite;
/** Another origin (another port) of the same app. */
let otherSite: StoredSessionSite;

const target: LoginTarget = { domain: "127.0.0.1", loginUrl: null, allowedDomains: [], engine: "browser" };

/** What the login learnt on the app's signed-in page: its "Sign out" link. */
const signOutEvidence: SessionEvidence = { version: 2, basis: "verified", salt: "salt", signedIn: [{ kind: "sign_out" }], signInPlaces: [], sessionCookies: ["sid"] };

beforeAll(async () => {
  chromium = await loginChromiumForTests();
  [site, otherSite] = await Promise.all([startStoredSessionSite(), startStoredSessionSite()]);
});

afterAll(async () => {
  await Promise.all([site?.stop(), otherSite?.stop()]);
  const left = chromium.running();
  await chromium.dispose();
  expect(left).toEqual([]);
});

const attribute = (page: Page, name: string) => page.locator("html").getAttribute(name);

async function waitForAttribute(page: Page, name: string): Promise<string> {
  return eventually(async () => (await attribute(page, name)) ?? undefined, `${name} on ${page.url()}`);
}

/** Signs in to `site` (all four stores) and opens `otherSite`'s page that keeps only sessionStorage, then captures the browser. */
async function signedInState(): Promise<{ state: StorageState; session: StoredSession }> {
  const browser = await chromium.launch();
  try {
    const context = await browser.newContext();
    const signIn = await context.newPage();
    await signIn.goto(`${site.origin}/sign-in`);
    const tabOnly = await context.newPage();
    await tabOnly.goto(`${otherSite.origin}/tab-only`);
    await Promise.all([waitForAttribute(signIn, "data-stored"), waitForAttribute(tabOnly, "data-stored")]);
    return { state: await captureBrowserState(context), session: site.lastSession() as StoredSession };
  } finally {
    await browser.close();
  }
}

/** What the app's own scripts find at `origin`/app in a fresh browser given `state`. */
async function seenByApp(state: StorageState, origin: string) {
  const browser = await chromium.launch();
  try {
    const page = await (await openContextWithState(browser, state)).newPage();
    await page.goto(`${origin}/app`);
    const api = await waitForAttribute(page, "data-api");
    return {
      local: await attribute(page, "data-local"),
      session: await attribute(page, "data-session"),
      sessionKeys: await attribute(page, "data-session-keys"),
      device: await attribute(page, "data-device"),
      api,
      signOutShown: await page.getByRole("link", { name: "Sign out" }).isVisible(),
    };
  } finally {
    await browser.close();
  }
}

describe("capturing and restoring a browser's state", () => {
  it("keeps cookies, localStorage, IndexedDB and each origin's sessionStorage through the profile archive", async () => {
    // Prepare
    const { state, session } = await signedInState();

    // Act
    const archived = await readZstdStorageState(await sessionArchive(state, aProfileManifest()));
    const [app, other] = [await seenByApp(archived, site.origin), await seenByApp(archived, otherSite.origin)];

    // Assess
    // The API answers 200 only to the cookie, the token, the tab value and the device key together.
    expect(app).toEqual({ local: session.token, session: session.tab, sessionKeys: "tab", device: session.device, api: "200", signOutShown: true });
    // Each origin gets its own sessionStorage back, and only its own.
    expect(other).toMatchObject({ local: "", session: "", sessionKeys: "tab-only", api: "none" });
    expect(archived.origins.find((origin) => origin.origin === otherSite.origin)).toEqual({
      origin: otherSite.origin,
      localStorage: [],
      sessionStorage: [{ name: "tab-only", value: "kept" }],
    });
  });
});

describe("the browser health check", () => {
  it("finds the session logged in while the site's API accepts it, and logged out once the site revoked it though the page still looks signed in", async () => {
    // Prepare
    const { state } = await signedInState();
    const probe = (evidence: SessionEvidence | null) => probeInBrowser(chromium.openBrowser, target, state, `${site.origin}/app`, evidence);
    const before = { plain: await probe(null), withEvidence: await probe(signOutEvidence) };

    // Act
    site.revoke();
    const after = { plain: await probe(null), withEvidence: await probe(signOutEvidence) };
    const page = await seenByApp(state, site.origin);

    // Assess
    expect({ plain: before.plain.state, withEvidence: before.withEvidence.state }).toEqual({ plain: "logged_in", withEvidence: "logged_in" });
    const refused = { state: "logged_out", reason: "the site's API answered HTTP 401 for /api/me while the page loaded" };
    expect(after).toEqual({ plain: refused, withEvidence: refused });
    expect(page).toMatchObject({ api: "401", signOutShown: true });
  });

  it("finds a session without its sessionStorage logged out: the page asks the API without the tab value", async () => {
    // Prepare
    const { state } = await signedInState();
    const withoutSessionStorage = { ...state, origins: state.origins.map(({ sessionStorage: _dropped, ...origin }) => origin) };

    // Act
    const outcome = await probeInBrowser(chromium.openBrowser, target, withoutSessionStorage, `${site.origin}/app`, null);

    // Assess
    expect(outcome).toMatchObject({ state: "logged_out" });
  });

  it("answers unreachable when nothing listens at the site, and closes its browser", async () => {
    // Prepare
    const gone = await serveRoutes(new Map(), handlerClock());
    await gone.stop();
    const opened: number[] = [];
    const openBrowser = async () => {
      const handle = await chromium.openBrowser(target);
      opened.push(...chromium.running());
      return handle;
    };

    // Act
    const outcome = await probeInBrowser(openBrowser, target, { cookies: [], origins: [] }, `http://127.0.0.1:${gone.port}/app`, null);

    // Assess
    expect(outcome).toEqual({ state: "unreachable", reason: `127.0.0.1:${gone.port} could not be reached (net::ERR_CONNECTION_REFUSED)` });
    expect(opened.length).toBeGreaterThan(0);
    await eventually(async () => (chromium.running().length === 0 ? true : undefined), "the probe's browser to exit");
  });
});
