import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContextWithState } from "#shared/login/browser/browser-state.ts";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import { chooseLoginEngine } from "#shared/login/engine-choice.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginEngine, LoginTarget, StepOutcome } from "#shared/login/types.ts";
import { startJudgementSites, type JudgementApp, type JudgementSites } from "../sites/judgement-sites.ts";
import { asInput, asSuccess, submitThroughJson, type Success } from "../support/engine-steps.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { patientMs } from "../support/patience.ts";

let sites: JudgementSites;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let engines: Record<"http" | "browser", LoginEngine>;

beforeAll(async () => {
  sites = await startJudgementSites();
  chromium = await loginChromiumForTests();
  engines = { http: createLoginEngine({ allowPrivateTargets: true }), browser: createBrowserLoginEngine({ openBrowser: chromium.openBrowser }) };
}, patientMs(120_000));

afterAll(async () => {
  const left = chromium?.running() ?? [];
  await chromium?.dispose();
  await sites?.stop();
  expect(left, "Chromium processes left behind by the engine").toEqual([]);
});

const target = (app: JudgementApp): LoginTarget => ({ domain: "127.0.0.1", loginUrl: sites.loginUrl(app), allowedDomains: [] });

/** The login form, answered once with the right email and password: what the page did with them. */
async function logIn(engine: LoginEngine, app: JudgementApp): Promise<StepOutcome> {
  const form = asInput(await engine.start(target(app)));
  expect(form.prompt.fields.map((field) => field.type)).toEqual(["identifier", "password"]);
  return submitThroughJson(engine, target(app), form, { field_values: { identifier: sites.user.email, password: sites.user.password } });
}

/** The app's home as a new browser with `session` loaded renders it: where it ends, and whether a login form shows. */
async function openWith(session: Success["session"], app: JudgementApp): Promise<{ url: string; asksPassword: boolean }> {
  const browser = await chromium.launch();
  try {
    const page = await (await openContextWithState(browser, session)).newPage();
    await page.goto(sites.homeUrl(app));
    return { url: page.url(), asksPassword: (await page.locator('input[type="password"]').count()) > 0 };
  } finally {
    await browser.close();
  }
}

describe.each(["http", "browser"] as const)("judging the page after a correct password (%s engine)", (kind) => {
  it("desk: a dashboard with a search box, a filter asking for a username and a 'Last successful login' card is signed in, in one step", async () => {
    const success = asSuccess(await logIn(engines[kind], "desk"));

    expect(success).toMatchObject({ engine: kind, postLoginUrl: sites.homeUrl("desk"), evidence: { basis: "verified" } });
    expect((await engines[kind].probe(target("desk"), success.session, success.postLoginUrl, success.evidence)).state).toBe("logged_in");
    expect(await openWith(success.session, "desk")).toEqual({ url: sites.homeUrl("desk"), asksPassword: false });
  }, patientMs(60_000));

  it("chat: a signed-in home that is the app's own connect form (a password, a choice and five more values) is signed in, in one step", async () => {
    const success = asSuccess(await logIn(engines[kind], "chat"));

    expect(success).toMatchObject({ engine: kind, postLoginUrl: sites.homeUrl("chat"), evidence: { basis: "verified" } });
    // The home a visitor without a session is sent away from: its form asks the network's password.
    expect((await openWith(success.session, "chat")).url).toBe(sites.homeUrl("chat"));
    // A check later reads the form's password box the same way: no sign of a logged-out session.
    expect((await engines[kind].probe(target("chat"), success.session, success.postLoginUrl, success.evidence)).state).toBe("logged_in");
    expect((await engines[kind].probe(target("chat"), { cookies: [], origins: [] }, success.postLoginUrl, success.evidence)).state).toBe("logged_out");
  }, patientMs(60_000));

  it("vault: a security check drawn on a canvas after a pre-session cookie is no success", async () => {
    const outcome = await logIn(engines[kind], "vault");

    expect(outcome).toMatchObject({ kind: "failure", errorCode: "unsupported_auth_method", message: expect.stringContaining("/vault/check") });
    // The HTTP engine hands such a page to the browser, whose script may get past a check it cannot.
    expect("browserMayHelp" in outcome && outcome.browserMayHelp).toBe(kind === "http");
  }, patientMs(60_000));
});

describe("a flow through the engine choice", () => {
  it("vault: the HTTP engine's check page goes to the browser, which ends it failed as well, never a success", async () => {
    const engine = chooseLoginEngine(engines);
    const outcome = await logIn(engine, "vault");

    expect(outcome).toMatchObject({ kind: "failure", errorCode: "unsupported_auth_method" });
  }, patientMs(90_000));
});
