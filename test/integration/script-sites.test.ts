import type { BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyzeStep, hasPasswordForm } from "#shared/login/forms.ts";
import { parsePage } from "#shared/login/page.ts";
import { totpCode } from "#shared/secrets/totp.ts";
import { scriptShapes, startScriptSites, type ScriptShape, type ScriptSites } from "../sites/script-sites.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";

let sites: ScriptSites;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;

beforeAll(async () => {
  sites = await startScriptSites();
  chromium = await loginChromiumForTests();
});

afterAll(async () => {
  const leftBehind = chromium?.running();
  await chromium?.dispose();
  await sites?.stop();
  expect(leftBehind).toEqual([]);
});

/** Runs `use` in a fresh context of a browser of its own, closed whatever happens. */
async function inBrowser<T>(use: (context: BrowserContext) => Promise<T>): Promise<T> {
  const browser = await chromium.launch();
  try {
    return await use(await browser.newContext());
  } finally {
    await browser.close();
  }
}

async function fillAndSubmit(scope: Page | Locator, identifierLabel: string, password: string, button: string): Promise<void> {
  await scope.getByLabel(identifierLabel, { exact: true }).fill(sites.user.email);
  await scope.getByLabel("Password", { exact: true }).fill(password);
  await scope.getByRole("button", { name: button, exact: true }).click();
}

/** How a person logs in on each shape, from its login URL. */
interface Driver {
  /** Goes through the steps up to the password and submits `password`. */
  submitPassword(page: Page, password: string): Promise<void>;
  /** The steps after an accepted password. */
  finish?(page: Page): Promise<void>;
  /** The site's words for a wrong password. */
  rejection: string;
}

const drivers: Record<ScriptShape, Driver> = {
  spa: { submitPassword: (page, password) => fillAndSubmit(page, "Email address", password, "Sign in"), rejection: "Invalid email or password." },
  reveal: {
    async submitPassword(page, password) {
      await page.getByRole("button", { name: "Log in" }).click();
      await fillAndSubmit(page.getByRole("dialog"), "Email", password, "Log in");
    },
    rejection: "Invalid email or password.",
  },
  idfirst: {
    async submitPassword(page, password) {
      await page.getByLabel("Email address").fill(sites.user.email);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByLabel("Password").fill(password);
      await page.getByRole("button", { name: "Continue" }).click();
    },
    async finish(page) {
      await page.getByRole("button", { name: /Authenticator app/ }).click();
      await page.getByLabel("Enter your one-time code").fill(totpCode(sites.user.totpSecret));
      await page.getByRole("button", { name: "Continue" }).click();
    },
    rejection: "Wrong email or password",
  },
  inline: { submitPassword: (page, password) => fillAndSubmit(page, "Email", password, "Sign in"), rejection: "Incorrect email or password." },
  session: { submitPassword: (page, password) => fillAndSubmit(page, "Email", password, "Sign in"), rejection: "Your account or password is incorrect." },
};

/** Logs in from the login URL and waits for the signed-in page to name the user. */
async function logIn(page: Page, shape: ScriptShape): Promise<string | null> {
  await page.goto(sites.loginUrl(shape));
  await drivers[shape].submitPassword(page, sites.user.password);
  await drivers[shape].finish?.(page);
  return signedInAs(page);
}

/** The name the signed-in page shows, once its account API has accepted the session. */
async function signedInAs(page: Page): Promise<string | null> {
  const marker = page.locator("[data-signed-in-as]");
  await marker.waitFor();
  return marker.textContent();
}

/** Marks the current document, so that a later check tells whether the page navigated meanwhile. */
async function markDocument(page: Page): Promise<void> {
  await page.evaluate(() => Object.assign(globalThis, { markedDocument: true }));
}

async function sameDocument(page: Page): Promise<boolean> {
  return page.evaluate(() => "markedDocument" in globalThis);
}

describe.each(scriptShapes)("script site %s", (shape) => {
  it("serves its login page with no form a plain HTTP fetch could use", async () => {
    const response = await fetch(sites.loginUrl(shape));
    const html = await response.text();
    const page = parsePage(html, sites.loginUrl(shape));

    expect(response.status).toBe(200);
    expect(html).not.toMatch(/<(form|input)\b/i);
    expect(hasPasswordForm(page)).toBe(false);
    expect(analyzeStep(page, null)).toBeNull();
  });

  it("logs in in a browser, names the user once its API accepted the session, and is logged out by revokeSessions", async () => {
    const loginsBefore = sites.logins(shape);
    await inBrowser(async (context) => {
      const page = await context.newPage();
      expect(await logIn(page, shape)).toBe(sites.user.name);
      expect(page.url()).toBe(sites.homeUrl(shape));
      expect(sites.logins(shape)).toBe(loginsBefore + 1);
      expect(sites.apiCalls(shape).at(-1)).toBe(200);

      sites.revokeSessions(shape);
      await page.goto(sites.homeUrl(shape));
      await page.waitForURL(sites.loginUrl(shape));

      expect(sites.apiCalls(shape).at(-1)).toBe(401);
      expect(await page.locator("[data-signed-in-as]").count()).toBe(0);
    });
  });

  it("answers a wrong password with its own message in the page, without navigating, and counts it", async () => {
    const failuresBefore = sites.failures(shape);
    await inBrowser(async (context) => {
      const page = await context.newPage();
      await page.goto(sites.loginUrl(shape));
      await markDocument(page);
      const url = page.url();
      await drivers[shape].submitPassword(page, "wrong password");

      await page.getByRole("alert").filter({ hasText: drivers[shape].rejection }).waitFor();
      expect(await sameDocument(page)).toBe(true);
      expect(page.url()).toBe(url);
      expect(sites.failures(shape)).toBe(failuresBefore + 1);
    });
  });
});

describe("script site shapes", () => {
  it("spa: keeps its token in localStorage with no cookie, draws the signed-in shell before its API answers, and on a 401 drops the token and shows its login form", async () => {
    await inBrowser(async (context) => {
      await logIn(await context.newPage(), "spa");
      const state = await context.storageState();

      expect(state.cookies).toEqual([]);
      expect(state.origins.flatMap((origin) => origin.localStorage.map((item) => item.name))).toEqual(["pinecone.auth"]);

      sites.revokeSessions("spa");
      let releaseAnswer!: () => void;
      const answerReleased = new Promise<void>((resolve) => (releaseAnswer = resolve));
      let markRequested!: () => void;
      const requested = new Promise<void>((resolve) => (markRequested = resolve));
      await context.route("**/spa/api/me", async (route) => {
        markRequested();
        await answerReleased;
        await route.continue();
      });
      const page = await context.newPage();
      await page.goto(sites.homeUrl("spa"));
      await requested;

      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(await page.locator(".avatar-name").textContent()).toBe(sites.user.name);
      expect(await page.locator("[data-signed-in-as]").count()).toBe(0);

      releaseAnswer();
      await page.getByLabel("Password").waitFor();
      expect(page.url()).toBe(sites.loginUrl("spa"));
      expect(sites.apiCalls("spa").at(-1)).toBe(401);
      expect(await page.evaluate(() => localStorage.getItem("pinecone.auth"))).toBeNull();
    });
  });

  it("reveal: has no login form until its Log in button is clicked, then shows it in a dialog and keeps the session in a cookie", async () => {
    await inBrowser(async (context) => {
      const page = await context.newPage();
      await page.goto(sites.loginUrl("reveal"));

      expect(await page.locator("input").count()).toBe(0);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("dialog").getByLabel("Password").waitFor();

      await fillAndSubmit(page.getByRole("dialog"), "Email", sites.user.password, "Log in");
      expect(await signedInAs(page)).toBe(sites.user.name);
      expect((await context.cookies()).map((cookie) => cookie.name)).toEqual(["_sprout_session"]);
    });
  });

  it("idfirst: steps through email, password, a method picker and a TOTP in one document, inside <login-card>'s shadow root", async () => {
    await inBrowser(async (context) => {
      const page = await context.newPage();
      await page.goto(sites.loginUrl("idfirst"));
      await page.getByLabel("Email address").waitFor();
      await markDocument(page);

      expect(await page.content()).not.toMatch(/<input\b/i);
      expect(await page.locator("login-card").evaluate((card) => card.shadowRoot?.querySelector("input[name=username]") !== null)).toBe(true);

      await drivers.idfirst.submitPassword(page, sites.user.password);
      for (const method of ["Authenticator app", "Text message", "Email"]) await page.getByRole("button", { name: new RegExp(`^${method}`) }).waitFor();
      await page.getByRole("button", { name: /^Text message/ }).click();
      await page.getByText("We've sent a text message to: XXX-XXX-4821").waitFor();
      expect(sites.lastCodeSent()).toMatch(/^\d{6}$/);
      await page.getByRole("button", { name: "Try another method" }).click();

      await page.getByRole("button", { name: /^Authenticator app/ }).click();
      await page.getByLabel("Enter your one-time code").fill(totpCode(sites.user.totpSecret, new Date(Date.now() - 10 * 60_000)));
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByRole("alert").filter({ hasText: "The code you entered is invalid" }).waitFor();
      expect(await sameDocument(page)).toBe(true);
      expect(page.url()).toBe(sites.loginUrl("idfirst"));

      await page.getByLabel("Enter your one-time code").fill(totpCode(sites.user.totpSecret));
      await page.getByRole("button", { name: "Continue" }).click();
      expect(await signedInAs(page)).toBe(sites.user.name);
      expect((await context.cookies()).map((cookie) => cookie.name)).toEqual(["appSession"]);
    });
  });

  it("inline: has its inputs outside any form and signs in by a click on a plain button", async () => {
    await inBrowser(async (context) => {
      const page = await context.newPage();
      await page.goto(sites.loginUrl("inline"));
      const button = page.getByRole("button", { name: "Sign in" });

      expect(await button.getAttribute("type")).toBe("button");
      expect(await page.locator("form").count()).toBe(0);
      expect(await page.locator("input").count()).toBe(2);

      await fillAndSubmit(page, "Email", sites.user.password, "Sign in");
      expect(await signedInAs(page)).toBe(sites.user.name);
    });
  });

  it("session: keeps its session in sessionStorage only, so a reload stays signed in and a new tab is signed out", async () => {
    await inBrowser(async (context) => {
      const page = await context.newPage();
      await logIn(page, "session");
      const state = await context.storageState();
      const sessionKeys = await page.evaluate(() => Object.keys(sessionStorage));

      expect(state.cookies).toEqual([]);
      expect(state.origins.flatMap((origin) => origin.localStorage)).toEqual([]);
      expect(sessionKeys).toContain("msal.account.keys");

      await page.reload();
      expect(await signedInAs(page)).toBe(sites.user.name);

      const newTab = await context.newPage();
      await newTab.goto(sites.homeUrl("session"));
      await newTab.waitForURL(sites.loginUrl("session"));
      await newTab.getByLabel("Password").waitFor();
    });
  });
});
