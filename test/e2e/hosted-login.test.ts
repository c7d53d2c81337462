import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type Kernel from "@onkernel/sdk";
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { hashHandoffCode } from "#shared/domain/handoff.ts";
import { hostedLoginStrings } from "#shared/hosted-login/strings.ts";
import { keys } from "#shared/store/keys.ts";
import { startLoginSite, type LoginShape, type LoginSite } from "../sites/login-site.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { cookieHeader, downloadedSession } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack, tableClientAt } from "../support/stack.ts";

/**
 * The hosted login page in a real browser (web security on), as the person a login link was sent
 * to uses it: keyboard first, on the test login site, through the local gateway.
 */

const screenshotDir = "test-results/hosted-login";
const phone = { width: 390, height: 844 };
const desktop = { width: 1280, height: 800 };
const en = hostedLoginStrings.en!;

let site: LoginSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let browser: Browser;
let app: { url: string; server: Server };
/** The browser contexts of the running test: each test starts with fresh ones (no storage shared). */
let contexts: BrowserContext[] = [];

/** The caller's own web app, where the page sends the user at the end: a loopback origin, allowed by `npm start`'s defaults. */
async function startCallerApp() {
  const server = createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(`<!doctype html><title>Back in the app</title><h1>Back in the app</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  mkdirSync(screenshotDir, { recursive: true });
  site = await startLoginSite();
  // A flow waits 30 s for input: room for a person typing on a loaded machine.
  stack = await startTestStack({ timeScale: 0.05 });
  client = officialClient(stack);
  app = await startCallerApp();
  chromium = await loginChromiumForTests();
  browser = await chromium.launch();
});

afterEach(async () => {
  for (const context of contexts) await context.close();
  contexts = [];
});

afterAll(async () => {
  await browser?.close();
  expect(chromium?.running()).toEqual([]);
  await chromium?.dispose();
  await new Promise((resolve) => app?.server.close(resolve));
  await stack?.stop();
  await site?.stop();
});

let profiles = 0;
function connectionFor(shape: LoginShape, extra: Record<string, unknown>) {
  return client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: `hosted-${shape}-${++profiles}`,
    login_url: `${site.url}/${shape}/login`,
    health_checks: false,
    ...extra,
  });
}

/** A fresh connection's login link, with `query` appended as the caller would; `extra` goes into the connection. */
async function loginLink(shape: LoginShape, query = "", extra: Record<string, unknown> = {}) {
  const connection = await connectionFor(shape, extra);
  const login = await client.auth.connections.login(connection.id);
  expect(login.hosted_url).toBe(`${stack.url}/login/${connection.id}?code=${login.handoff_code}`);
  return { connection, code: login.handoff_code as string, url: `${login.hosted_url}${query}` };
}

/** The page at `url` in a fresh browser context, as a new person opening the link; `beforeOpening` runs on the tab before it loads. */
async function openPage(url: string, options: { locale?: string; beforeOpening?: (page: Page) => Promise<unknown> } = {}): Promise<Page> {
  const { beforeOpening, ...contextOptions } = options;
  const context = await browser.newContext({ viewport: desktop, ...contextOptions });
  contexts.push(context);
  const page = await context.newPage();
  await beforeOpening?.(page);
  await page.goto(url);
  return page;
}

interface Labelled {
  textContent: string | null;
}

/** The focused element: its tag, role, label (for inputs) and text; all empty while nothing has focus. */
async function focused(page: Page): Promise<{ tag: string; role: string | null; label: string; text: string }> {
  const active = page.locator(":focus");
  if ((await active.count()) === 0) return { tag: "", role: null, label: "", text: "" };
  return active.evaluate((element) => ({
    tag: String(element.tagName).toLowerCase(),
    role: element.getAttribute("role") as string | null,
    label: [...((element.labels as Labelled[] | undefined) ?? [])].map((label) => label.textContent ?? "").join(" "),
    text: String(element.textContent ?? ""),
  }));
}

/** Waits until the keyboard focus is on an input labelled `label`, as a new step puts it. */
async function focusedInput(page: Page, label: RegExp) {
  await page.getByLabel(label).first().waitFor();
  return eventually(async () => {
    const now = await focused(page);
    return now.tag === "input" && label.test(now.label) ? now : undefined;
  }, `focus on the input labelled ${label}`);
}

/** Every input of the step has a label with text, which the accessibility tree names it by. */
async function expectEveryInputLabelled(page: Page) {
  const labels = await page.locator("input").evaluateAll((inputs) =>
    inputs.map((input) => [...((input.labels as Labelled[] | undefined) ?? [])].map((label) => label.textContent?.trim() ?? "").join(" ")),
  );
  expect(labels.length).toBeGreaterThan(0);
  for (const label of labels) {
    expect(label).not.toBe("");
    expect(await page.getByLabel(label, { exact: true }).count()).toBe(1);
  }
}

/** Types the user's email and password as a person does: into the focused field, Tab, Enter. */
async function typeEmailAndPassword(page: Page, password = site.user.password) {
  await focusedInput(page, /email/i);
  await page.keyboard.type(site.user.email);
  await page.keyboard.press("Tab");
  expect((await focused(page)).label).toMatch(/password/i);
  await page.keyboard.type(password);
  await page.keyboard.press("Enter");
}

async function typeTotpCode(page: Page) {
  await focusedInput(page, /code/i);
  await page.keyboard.type(site.totp());
  await page.keyboard.press("Enter");
}

async function expectHeading(page: Page, text: string) {
  await page.getByRole("heading", { level: 1, name: text, exact: true }).waitFor();
}

/**
 * Answers the tab's navigation to `origin` with 204 No Content, which a browser does not follow, so
 * the page that asked to go stays to be looked at; `requested` is the URL it asked for.
 */
async function stayOnNavigationTo(page: Page, origin: string): Promise<{ requested: Promise<URL> }> {
  let asked!: (url: URL) => void;
  const requested = new Promise<URL>((resolve) => (asked = resolve));
  await page.route(`${origin}/**`, (route) => {
    asked(new URL(route.request().url()));
    return route.fulfill({ status: 204 });
  });
  return { requested };
}

/** The state on screen at a phone's and a desktop's width, into the git-ignored results folder. */
async function screenshots(page: Page, state: string) {
  for (const [name, size] of [["phone", phone], ["desktop", desktop]] as const) {
    await page.setViewportSize(size);
    await page.screenshot({ path: `${screenshotDir}/${state}-${name}.png`, fullPage: true });
  }
}

async function expectLoggedInWithDownloadedProfile(profileName: string, shape: LoginShape, shows = `Welcome, ${site.user.email}`) {
  const session = await downloadedSession(client, profileName);
  const account = `${site.url}/${shape}/account`;
  const response = await fetch(account, { headers: { cookie: cookieHeader(session, account) }, redirect: "manual" });
  expect(response.status).toBe(200);
  expect(await response.text()).toContain(shows);
}

describe("the hosted login page in a real browser", () => {
  it("logs in to the totp shape by keyboard: identifier and password, then the TOTP code; the profile logs in", async () => {
    const { connection, url } = await loginLink("totp");
    const page = await openPage(url);

    await focusedInput(page, /email/i);
    expect(new URL(page.url()).searchParams.has("code")).toBe(false);
    await expectEveryInputLabelled(page);
    await screenshots(page, "field-step");
    await typeEmailAndPassword(page);
    await typeTotpCode(page);

    await expectHeading(page, en.successHeading);
    await screenshots(page, "success");
    expect(await client.auth.connections.retrieve(connection.id)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
    await expectLoggedInWithDownloadedProfile(connection.profile_name, "totp");
  });

  it("chooses the authenticator method from the MFA picker", async () => {
    const { connection, url } = await loginLink("mfa-picker");
    const page = await openPage(url);
    await typeEmailAndPassword(page);

    const method = page.getByRole("button", { name: /authenticator/i });
    await method.waitFor();
    expect((await focused(page)).tag).toBe("button");
    await screenshots(page, "picker");
    await method.focus();
    await page.keyboard.press("Enter");
    await typeTotpCode(page);

    await expectHeading(page, en.successHeading);
    expect(await client.auth.connections.retrieve(connection.id)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
    await expectLoggedInWithDownloadedProfile(connection.profile_name, "mfa-picker");
  });

  it("chooses an account from the account picker", async () => {
    const { connection, url } = await loginLink("accounts");
    const page = await openPage(url);
    await typeEmailAndPassword(page);

    await page.getByRole("group", { name: en.accountLegend }).waitFor();
    await page.getByRole("button", { name: /acme corp/i }).click();

    await expectHeading(page, en.successHeading);
    await expectLoggedInWithDownloadedProfile(connection.profile_name, "accounts", "You are signed in to Acme Corp");
  });

  it("shows the site's wrong-password message as a focused alert, and the retry succeeds", async () => {
    const { connection, url } = await loginLink("plain");
    const page = await openPage(url);
    await typeEmailAndPassword(page, "wrong horse");

    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/incorrect email or password/i);
    await eventually(async () => ((await focused(page)).role === "alert" ? true : undefined), "focus on the alert");
    await screenshots(page, "error");
    await page.keyboard.press("Tab");
    await typeEmailAndPassword(page);

    await expectHeading(page, en.successHeading);
    expect(await client.auth.connections.retrieve(connection.id)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", website_error: null });
  });

  it("is usable by keyboard alone: Tab reaches the submit button, focus starts each step on its first field", async () => {
    const { connection, url } = await loginLink("two-step");
    const page = await openPage(url);
    await focusedInput(page, /email|username/i);
    await expectEveryInputLabelled(page);
    await page.keyboard.type(site.user.email);

    await page.keyboard.press("Tab");
    expect(await focused(page)).toMatchObject({ tag: "button", text: en.submit });
    await page.keyboard.press("Enter");
    await focusedInput(page, /password/i);
    await expectEveryInputLabelled(page);
    await page.keyboard.type(site.user.password);
    await page.keyboard.press("Enter");

    await expectHeading(page, en.successHeading);
    expect(await client.auth.connections.retrieve(connection.id)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
  });

  it("speaks the browser's language when the page has it", async () => {
    const { url } = await loginLink("plain");
    const page = await openPage(url, { locale: "de-DE" });

    await expectHeading(page, hostedLoginStrings.de!.heading.replace("{domain}", "127.0.0.1"));
    expect(await page.getAttribute("html", "lang")).toBe("de");
  });
});

describe("where the page sends the user at the end", () => {
  it("goes to success_url with profile_name and domain", async () => {
    const { connection, url } = await loginLink("plain", `&success_url=${encodeURIComponent(`${app.url}/done?from=hosted`)}`);
    const page = await openPage(url);
    await typeEmailAndPassword(page);

    await page.waitForURL((current) => current.origin === app.url);
    const landed = new URL(page.url());
    expect(landed.pathname).toBe("/done");
    expect(Object.fromEntries(landed.searchParams)).toEqual({ from: "hosted", profile_name: connection.profile_name, domain: "127.0.0.1" });
  });

  it("goes to error_url with the code and a message when the flow fails", async () => {
    const { url } = await loginLink("captcha", `&error_url=${encodeURIComponent(`${app.url}/failed`)}`);
    // The site shows a CAPTCHA with its form: the flow fails before asking anything.
    const page = await openPage(url);

    await page.waitForURL((current) => current.origin === app.url);
    const landed = new URL(page.url());
    expect(landed.pathname).toBe("/failed");
    expect(landed.searchParams.get("code")).toBe("captcha_blocked");
    expect(landed.searchParams.get("message")).not.toBe("");
  });

  it("follows a valid success_url without a notice when only the error_url was refused", async () => {
    const query = `&success_url=${encodeURIComponent(`${app.url}/done`)}&error_url=${encodeURIComponent("https://elsewhere.example/failed")}`;
    const { connection, url } = await loginLink("plain", query);
    const page = await openPage(url);
    const navigation = await stayOnNavigationTo(page, app.url);
    await typeEmailAndPassword(page);

    const target = await navigation.requested;
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(en.successHeading);
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(target.pathname).toBe("/done");
    expect(target.searchParams.get("profile_name")).toBe(connection.profile_name);
  });

  it("a login answered at once (the saved session still works) gives a link that opens on the success state and goes to success_url", async () => {
    const { connection, url } = await loginLink("plain");
    const first = await openPage(url);
    await typeEmailAndPassword(first);
    await expectHeading(first, en.successHeading);

    const again = await client.auth.connections.login(connection.id);
    expect(await client.auth.connections.retrieve(connection.id)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
    let navigation!: Awaited<ReturnType<typeof stayOnNavigationTo>>;
    const page = await openPage(`${again.hosted_url}&success_url=${encodeURIComponent(`${app.url}/done`)}`, {
      // Before the page loads: it goes on at once, the flow having ended already.
      beforeOpening: async (tab) => (navigation = await stayOnNavigationTo(tab, app.url)),
    });

    const target = await navigation.requested;
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(en.successHeading);
    expect(target.pathname).toBe("/done");
    expect(Object.fromEntries(target.searchParams)).toEqual({ profile_name: connection.profile_name, domain: "127.0.0.1" });
  });

  it("refuses a javascript: success_url and says why, staying on the success state", async () => {
    const { connection, url } = await loginLink("plain", `&success_url=${encodeURIComponent("javascript:alert(document.domain)")}`);
    const page = await openPage(url);
    const dialogs: string[] = [];
    page.on("dialog", (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await typeEmailAndPassword(page);

    await expectHeading(page, en.successHeading);
    const refusal = page.getByRole("alert");
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe(en.redirectRefused.replace("{reason}", en.redirectRefusedReasons.scheme));
    expect(new URL(page.url()).pathname).toBe(`/login/${connection.id}`);
    expect(dialogs).toEqual([]);
  });
});

describe("links that can't be used", () => {
  it("a used link asks for a new one in another browser, while a reload of the first tab keeps working from its kept token", async () => {
    const { url } = await loginLink("plain");
    const first = await openPage(url);
    await focusedInput(first, /email/i);

    const second = await openPage(url);
    await expectHeading(second, en.linkHeading);
    await screenshots(second, "expired-link");

    await first.reload();
    await focusedInput(first, /email/i);
  });

  it("an expired code asks for a new link", async () => {
    const { code, url } = await loginLink("plain");
    await tableClientAt(inject("dynamoEndpoint")).send(
      new UpdateCommand({
        TableName: stack.tableName,
        Key: keys.handoffCode(hashHandoffCode(code)),
        UpdateExpression: "SET code_expires_at = :past",
        ExpressionAttributeValues: { ":past": new Date(Date.now() - 1000).toISOString() },
      }),
    );

    const page = await openPage(url);

    await expectHeading(page, en.linkHeading);
  });

  it("another connection's code does not open this connection, and stays usable for its own", async () => {
    const mine = await loginLink("plain");
    const other = await loginLink("plain");

    const page = await openPage(`${stack.url}/login/${mine.connection.id}?code=${other.code}`);
    await expectHeading(page, en.linkHeading);
    await page.goto(other.url);

    await focusedInput(page, /email/i);
  });

  it("keeps the token in the tab, never the spent code, and nothing beyond the tab", async () => {
    const { code, url } = await loginLink("plain");
    const page = await openPage(url);
    await focusedInput(page, /email/i);

    const kept = await page.evaluate(() => ({ session: JSON.stringify({ ...sessionStorage }), local: JSON.stringify({ ...localStorage }) }));
    expect(kept.session).not.toContain(code);
    expect(kept.session).toContain("jwt");
    expect(kept.local).toBe("{}");
  });
});

describe("opening a link when the service does not answer, or over an older one", () => {
  it("keeps the code when the exchange fails with a 5xx, says the service could not be reached, and a reload signs in", async () => {
    const { connection, code, url } = await loginLink("plain");
    let exchanges = 0;
    const page = await openPage(url, {
      beforeOpening: (tab) =>
        tab.route(`**/auth/connections/${connection.id}/exchange`, (route) =>
          ++exchanges === 1
            ? route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ code: "service_unavailable", message: "try again" }) })
            : route.continue(),
        ),
    });

    await expectHeading(page, en.unreachableHeading);
    expect(new URL(page.url()).searchParams.get("code")).toBe(code);
    await page.getByRole("button", { name: en.tryAgain, exact: true }).press("Enter");

    await focusedInput(page, /email/i);
    expect(exchanges).toBe(2);
    expect(new URL(page.url()).searchParams.has("code")).toBe(false);
  });

  it("spends a new link's code in a tab that still keeps the token of an older link", async () => {
    const { connection, url } = await loginLink("plain");
    const page = await openPage(url);
    await focusedInput(page, /email/i);

    const again = await client.auth.connections.login(connection.id);
    await page.goto(again.hosted_url as string);
    await focusedInput(page, /email/i);

    const reused = await fetch(`${stack.url}/auth/connections/${connection.id}/exchange`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: again.handoff_code }),
    });
    expect(reused.status).toBe(401);
    expect(new URL(page.url()).searchParams.has("code")).toBe(false);
  });
});

describe("steps and end states beyond the password form", () => {
  it.each([
    ["breaks off", (route: Route) => route.abort("connectionreset")],
    ["ends at once", (route: Route) => route.fulfill({ status: 200, headers: { "content-type": "text/event-stream" }, body: "" })],
  ])("follows a two-step flow by polling when the events stream %s, and reaches success", async (_, breakStream) => {
    const { connection, url } = await loginLink("two-step");
    const streamRequests: string[] = [];
    const page = await openPage(url, {
      beforeOpening: (tab) =>
        tab.route(`**/auth/connections/${connection.id}/events`, (route) => {
          streamRequests.push(route.request().headers()["accept"] ?? "");
          return breakStream(route);
        }),
    });

    await focusedInput(page, /email|username/i);
    await page.keyboard.type(site.user.email);
    await page.keyboard.press("Enter");
    await focusedInput(page, /password/i);
    await page.keyboard.type(site.user.password);
    await page.keyboard.press("Enter");

    await expectHeading(page, en.successHeading);
    expect(streamRequests).toContain("text/event-stream");
    expect(await client.auth.connections.retrieve(connection.id)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
  });

  it("offers the site's SSO button by its accessible name; choosing it goes on to the provider's fields, and the login succeeds", async () => {
    const { connection, url } = await loginLink("sso", "", { allowed_domains: ["localhost"] });
    const page = await openPage(url);
    await focusedInput(page, /email/i);

    const ssoGroup = page.getByRole("group", { name: en.ssoLegend, exact: true });
    const ssoButton = ssoGroup.getByRole("button", { name: "Sign in with TestSSO", exact: true });
    expect(await ssoGroup.getByRole("button").count()).toBe(1);
    await ssoButton.focus();
    await page.keyboard.press("Enter");

    // The provider's own sign-in form, on its own host, as the next step.
    await focusedInput(page, /work email/i);
    await expectEveryInputLabelled(page);
    await typeEmailAndPassword(page);

    await expectHeading(page, en.successHeading);
    expect(await client.auth.connections.retrieve(connection.id)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
    await expectLoggedInWithDownloadedProfile(connection.profile_name, "sso");
  });

  it("shows the canceled end state when the connection is deleted while the page waits for input", async () => {
    const { connection, url } = await loginLink("plain");
    const page = await openPage(url);
    await focusedInput(page, /email/i);

    await client.auth.connections.delete(connection.id);

    await expectHeading(page, en.canceledHeading);
    expect(await page.getByText(en.canceledBody, { exact: true }).count()).toBe(1);
    expect(await page.locator("input").count()).toBe(0);
  });

  it("goes to error_url with code=canceled when the connection is deleted while the page waits for input", async () => {
    const { connection, url } = await loginLink("plain", `&error_url=${encodeURIComponent(`${app.url}/failed`)}`);
    const page = await openPage(url);
    await focusedInput(page, /email/i);

    await client.auth.connections.delete(connection.id);

    await page.waitForURL((current) => current.origin === app.url);
    const landed = new URL(page.url());
    expect(landed.pathname).toBe("/failed");
    expect(landed.searchParams.get("code")).toBe("canceled");
    expect(landed.searchParams.get("message")).not.toBe("");
  });
});
