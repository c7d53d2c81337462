import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StorageState } from "#shared/archive/storage-state.ts";
import { answerPrompt, canReauthReason, type StoredCredential } from "#shared/domain/reauth.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import { totpCode } from "#shared/secrets/totp.ts";
import type { LoginTarget, StepOutcome, Submission } from "#shared/login/types.ts";
import { startLoginSite, type LoginSite } from "../sites/login-site.ts";
import { field, page, postForm } from "../sites/site-html.ts";
import { handlerClock, htmlReply, invalidCsrfReply, preSessions, randomToken, serveRoutes, type Route } from "../sites/site-http.ts";
import { asInput, asSuccess, submitThroughJson, type Input, type Success } from "../support/engine-steps.ts";

let site: LoginSite;

beforeAll(async () => {
  site = await startLoginSite();
});

afterAll(async () => {
  await site?.stop();
});

const engine = createLoginEngine({ allowPrivateTargets: true });

function target(shape: string, allowedDomains: string[] = []): LoginTarget {
  return { domain: "127.0.0.1", loginUrl: `${site.url}/${shape}/login`, allowedDomains };
}

const answer = (loginTarget: LoginTarget, step: Input, submission: Submission) => submitThroughJson(engine, loginTarget, step, submission);

const credentials = () => ({ field_values: { identifier: site.user.email, password: site.user.password } });

/** A fresh HTTP client that knows nothing but the session's cookies for the site's host. */
async function fetchWithSession(session: StorageState, path: string) {
  const cookie = session.cookies
    .filter((candidate) => candidate.domain === "127.0.0.1" && path.startsWith(candidate.path))
    .map((candidate) => `${candidate.name}=${candidate.value}`)
    .join("; ");
  const response = await fetch(new URL(path, site.url), { headers: { cookie }, redirect: "manual" });
  return { status: response.status, body: await response.text() };
}

describe("login engine against the test site", () => {
  it("plain: a wrong password shows the site's error on the same prompt, then the right one logs in", async () => {
    const first = asInput(await engine.start(target("plain")));
    expect(first.prompt.fields).toEqual([
      { id: "identifier", ref: "identifier", type: "identifier", label: "Email address", observed_selector: "#email", required: true },
      { id: "password", ref: "password", type: "password", label: "Password", observed_selector: "#password", required: true },
    ]);
    expect(first.prompt.discovered_fields.map((field) => [field.name, field.type])).toEqual([
      ["email", "email"],
      ["password", "password"],
    ]);

    const rejected = asInput(await answer(target("plain"), first, { field_values: { identifier: site.user.email, password: "wrong horse" } }));
    expect(rejected.websiteError).toBe("Incorrect email or password.");
    expect(rejected.prompt).toEqual(first.prompt);

    const success = asSuccess(await answer(target("plain"), rejected, { fields: { email: site.user.email, password: site.user.password } }));
    expect(success.postLoginUrl).toBe(`${site.url}/plain/account`);
    expect(success.requirements).toEqual(["identifier", "password"]);
    expect(success.durableValues).toEqual({ identifier: site.user.email, password: site.user.password });
    expect(success.ssoProvider).toBeNull();
    expect(success.session.cookies).toContainEqual(
      expect.objectContaining({ name: "plain_session", domain: "127.0.0.1", path: "/plain", httpOnly: true, sameSite: "Lax", expires: -1 }),
    );
    expect(success.session.origins).toEqual([{ origin: site.url, localStorage: [{ name: "theme", value: "dark" }] }]);

    const account = await fetchWithSession(success.session, "/plain/account");
    expect(account.status).toBe(200);
    expect(account.body).toContain("Welcome, ada@example.com");
  });

  it("plain: three rejected passwords in a row end the flow with credentials_invalid", async () => {
    let step = asInput(await engine.start(target("plain")));
    for (const attempt of [1, 2]) {
      step = asInput(await answer(target("plain"), step, { field_values: { identifier: site.user.email, password: `wrong ${attempt}` } }));
      expect(step.websiteError).toBe("Incorrect email or password.");
    }
    const failure = await answer(target("plain"), step, { field_values: { identifier: site.user.email, password: "wrong 3" } });
    expect(failure).toEqual({ kind: "failure", errorCode: "credentials_invalid", message: "the site rejected 3 attempts in a row: Incorrect email or password." });
  });

  it("finds the login form from the home page's sign-in link", async () => {
    const step = asInput(await engine.start({ domain: "127.0.0.1", loginUrl: `${site.url}/`, allowedDomains: [] }));
    expect(step.prompt.fields.map((field) => field.id)).toEqual(["identifier", "password"]);
    asSuccess(await answer(target("plain"), step, credentials()));
  });

  it("two-step: the identifier on one page, the password on the next", async () => {
    const identifierStep = asInput(await engine.start(target("two-step")));
    expect(identifierStep.prompt.fields).toEqual([expect.objectContaining({ id: "identifier", label: "Email or username", observed_selector: "#username" })]);
    const passwordStep = asInput(await answer(target("two-step"), identifierStep, { field_values: { identifier: site.user.email } }));
    expect(passwordStep.prompt.fields.map((field) => field.id)).toEqual(["password"]);
    const success = asSuccess(await answer(target("two-step"), passwordStep, { field_values: { password: site.user.password } }));
    expect(success.requirements).toEqual(["identifier", "password"]);
    expect(success.durableValues).toEqual({ identifier: site.user.email, password: site.user.password });
    expect((await fetchWithSession(success.session, "/two-step/account")).status).toBe(200);
  });

  it("totp: asks for the authenticator code, rejects a wrong one, accepts the current one; the code stays out of the state", async () => {
    const codeStep = asInput(await answer(target("totp"), asInput(await engine.start(target("totp"))), credentials()));
    expect(codeStep.prompt.fields).toEqual([expect.objectContaining({ id: "totp_code", type: "totp_code", observed_selector: "#otp" })]);
    expect(codeStep.prompt.discovered_fields).toEqual([
      expect.objectContaining({ name: "otp", type: "totp", linked_mfa_type: "totp", hint: "Enter the 6-digit code from your authenticator app" }),
    ]);
    const wrong = site.totp(new Date(Date.now() - 10 * 60_000));
    const retry = asInput(await answer(target("totp"), codeStep, { field_values: { totp_code: wrong } }));
    expect(retry.websiteError).toMatch(/code/i);

    const code = site.totp();
    const success = asSuccess(await answer(target("totp"), retry, { field_values: { totp_code: code } }));
    expect(success.requirements).toEqual(["identifier", "password", "totp_code"]);
    expect(success.durableValues).toEqual({ identifier: site.user.email, password: site.user.password });
    expect(JSON.stringify(retry.state)).not.toContain(wrong);
    expect((await fetchWithSession(success.session, "/totp/account")).status).toBe(200);
  });

  it("sms: asks for the texted code, linked to sms", async () => {
    const codeStep = asInput(await answer(target("sms"), asInput(await engine.start(target("sms"))), credentials()));
    expect(codeStep.prompt.fields).toEqual([expect.objectContaining({ id: "code", type: "code" })]);
    expect(codeStep.prompt.discovered_fields[0]).toMatchObject({ name: "code", type: "code", linked_mfa_type: "sms" });
    const code = site.lastSms("sms")!;
    const success = asSuccess(await answer(target("sms"), codeStep, { field_values: { code } }));
    expect(success.requirements).toEqual(["identifier", "password", "sms_code"]);
    expect(JSON.stringify(success)).not.toContain(`"${code}"`);
    expect((await fetchWithSession(success.session, "/sms/account")).status).toBe(200);
  });

  it("mfa-picker: offers the methods; the authenticator app and text message both lead in", async () => {
    const pickerOf = async () => asInput(await answer(target("mfa-picker"), asInput(await engine.start(target("mfa-picker"))), credentials()));
    const picker = await pickerOf();
    expect(picker.prompt.mfa_options).toEqual([
      { label: "Text message to ***-1234", type: "sms", description: null, target: "***-1234" },
      { label: "Authenticator app", type: "totp", description: null, target: null },
      { label: "Email to a***@example.com", type: "email", description: null, target: "a***@example.com" },
    ]);
    expect(picker.prompt.choices.map((choice) => [choice.id, choice.type])).toEqual([
      ["sms", "mfa_method"],
      ["totp", "mfa_method"],
      ["email", "mfa_method"],
    ]);

    const totpStep = asInput(await answer(target("mfa-picker"), picker, { mfa_option_id: "totp", fields: {} }));
    expect(totpStep.prompt.fields.map((field) => field.type)).toEqual(["totp_code"]);
    const viaTotp = asSuccess(await answer(target("mfa-picker"), totpStep, { field_values: { totp_code: site.totp() } }));
    expect(viaTotp.requirements).toEqual(["identifier", "password", "choice", "totp_code"]);

    const smsStep = asInput(await answer(target("mfa-picker"), await pickerOf(), { selected_choice_id: "sms" }));
    expect(smsStep.prompt.discovered_fields[0]).toMatchObject({ type: "code", linked_mfa_type: "sms" });
    const viaSms = asSuccess(await answer(target("mfa-picker"), smsStep, { field_values: { code: site.lastSms("mfa-picker")! } }));
    expect(viaSms.requirements).toEqual(["identifier", "password", "choice", "sms_code"]);
    expect((await fetchWithSession(viaSms.session, "/mfa-picker/account")).status).toBe(200);
  });

  it("accounts: lists the accounts and signs in to the one picked", async () => {
    const picker = asInput(await answer(target("accounts"), asInput(await engine.start(target("accounts"))), credentials()));
    expect(picker.prompt.sign_in_options).toEqual([
      { id: "account_acme", label: "Acme Corp", description: "ada@acme.example" },
      { id: "account_personal", label: "Personal", description: "ada@example.com" },
    ]);
    const success = asSuccess(await answer(target("accounts"), picker, { sign_in_option_id: "account_personal" }));
    expect(success.requirements).toEqual(["identifier", "password", "choice"]);
    const account = await fetchWithSession(success.session, "/accounts/account");
    expect(account.status).toBe(200);
    expect(account.body).toContain("Personal");
  });

  it("sso: follows the TestSSO button to the second host, signs in there, and comes back with both hosts' cookies", async () => {
    const sso = target("sso", ["localhost"]);
    const first = asInput(await engine.start(sso));
    expect(first.prompt.pending_sso_buttons).toEqual([{ label: "Sign in with TestSSO", provider: "testsso", selector: '//a[normalize-space()="Sign in with TestSSO"]' }]);
    expect(first.prompt.choices).toContainEqual(expect.objectContaining({ id: "sso_testsso", type: "sso_provider" }));

    const idp = asInput(await answer(sso, first, { sso_provider: "TestSSO", fields: {} }));
    expect(idp.prompt.fields.map((field) => field.id)).toEqual(["identifier", "password"]);
    const success = asSuccess(await answer(sso, idp, credentials()));
    expect(success.ssoProvider).toBe("testsso");
    expect(success.postLoginUrl).toBe(`${site.url}/sso/account`);
    expect(new Set(success.session.cookies.map((cookie) => cookie.domain))).toEqual(new Set(["127.0.0.1", "localhost"]));
    expect((await fetchWithSession(success.session, "/sso/account")).status).toBe(200);
  });

  it("sso: without localhost in allowed_domains, the button's host is refused and never asked", async () => {
    const first = asInput(await engine.start(target("sso")));
    const failure = await answer(target("sso"), first, { sso_button_selector: first.prompt.pending_sso_buttons[0]!.selector });
    expect(failure).toEqual({
      kind: "failure",
      errorCode: "unsupported_auth_method",
      message: expect.stringMatching(/^refused to follow a link: localhost is outside the connection's domain/),
    });
  });

  it("captcha: fails with captcha_blocked", async () => {
    expect(await engine.start(target("captcha"))).toEqual({ kind: "failure", errorCode: "captcha_blocked", message: expect.stringContaining("captcha") });
  });

  it("a submission that answers nothing asks again, naming what is missing", async () => {
    const first = asInput(await engine.start(target("plain")));
    const again = asInput(await answer(target("plain"), first, { field_values: { identifier: site.user.email } }));
    expect(again.websiteError).toBe("missing a value for field 'password' (Password)");
    expect(again.prompt).toEqual(first.prompt);
  });
});

describe("health probe", () => {
  it("says logged in with the session, logged out once the site expires it", async () => {
    const success = asSuccess(await answer(target("plain"), asInput(await engine.start(target("plain"))), credentials()));
    expect(await engine.probe(target("plain"), success.session, success.postLoginUrl, success.evidence)).toEqual({ state: "logged_in" });

    site.expireSessions("plain");
    expect(await engine.probe(target("plain"), success.session, success.postLoginUrl, success.evidence)).toEqual({
      state: "logged_out",
      reason: "redirected to the login page /plain/login",
    });
  });

  it("says unreachable when nothing listens", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const probe = await engine.probe(target("plain"), { cookies: [], origins: [] }, `http://127.0.0.1:${closedPort}/plain/account`, null);
    expect(probe).toEqual({ state: "unreachable", reason: "could not reach 127.0.0.1: ECONNREFUSED" });
  });
});

describe("re-auth without a person", () => {
  async function reauth(shape: string, credential: StoredCredential) {
    let outcome = await engine.start(target(shape));
    for (let step = 0; step < 6 && outcome.kind === "input"; step++) {
      const answered = answerPrompt(outcome.prompt, credential);
      if ("blocked" in answered) return answered;
      outcome = await answer(target(shape), outcome, answered.submission);
    }
    return outcome;
  }

  it("re-logs in on totp with the stored values and secret, after the site expired the session", async () => {
    const first = asSuccess(await answer(target("totp"), asInput(await answer(target("totp"), asInput(await engine.start(target("totp"))), credentials())), { field_values: { totp_code: site.totp() } }));
    site.expireSessions("totp");
    expect(await engine.probe(target("totp"), first.session, first.postLoginUrl, first.evidence)).toMatchObject({ state: "logged_out" });
    expect(canReauthReason(first.requirements, true, true)).toBe("requirements_satisfiable");

    const logins = site.logins("totp");
    const again = asSuccess((await reauth("totp", { values: first.durableValues, totpCode: () => totpCode(site.user.totpSecret) })) as StepOutcome);
    expect(site.logins("totp")).toBe(logins + 1);
    expect(await engine.probe(target("totp"), again.session, again.postLoginUrl, again.evidence)).toEqual({ state: "logged_in" });
  });

  it("picks the authenticator app on the MFA picker when there is a secret", async () => {
    const outcome = await reauth("mfa-picker", { values: { identifier: site.user.email, password: site.user.password }, totpCode: () => site.totp() });
    asSuccess(outcome as StepOutcome);
  });

  it("is blocked on an SMS code, and can_reauth_reason says so", async () => {
    const outcome = await reauth("sms", { values: { identifier: site.user.email, password: site.user.password }, totpCode: null });
    expect(outcome).toEqual({ blocked: "requires_sms_code" });
    expect(canReauthReason(["identifier", "password", "sms_code"], true, false)).toBe("requires_sms_code");
  });
});

describe("a login whose session is a token the page keeps", () => {
  /** The login page starts a CSRF cookie; the sign-in POST answers a JSON token for the page's script to keep, and sets no cookie. */
  async function startTokenSite() {
    const visitors = preSessions("csrf", "/");
    const loginPage: Route = {
      GET: (exchange) =>
        htmlReply(
          page({
            brand: "Tokens",
            title: "Sign in",
            main: postForm({
              action: "/login",
              csrfToken: visitors.csrfToken(visitors.idOf(exchange)),
              submit: "Sign in",
              body: [
                field({ id: "email", name: "email", label: "Email address", type: "email", autocomplete: "username" }),
                field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password" }),
              ].join("\n"),
            }),
          }),
        ),
      POST: (exchange) =>
        visitors.verifiedId(exchange) ? { status: 200, body: JSON.stringify({ token: randomToken() }), headers: { "content-type": "application/json" } } : invalidCsrfReply(),
    };
    const server = await serveRoutes(new Map([["/login", loginPage]]), handlerClock());
    return { url: `http://127.0.0.1:${server.port}`, stop: server.stop };
  }

  it("leaves it to the browser: a CSRF cookie from the login page is no session", async () => {
    const tokenSite = await startTokenSite();
    try {
      const loginTarget: LoginTarget = { domain: "127.0.0.1", loginUrl: `${tokenSite.url}/login`, allowedDomains: [] };
      const first = asInput(await engine.start(loginTarget));

      const outcome = await answer(loginTarget, first, { field_values: { identifier: "ada@example.com", password: "correct horse" } });

      expect(outcome).toMatchObject({ kind: "failure", errorCode: "internal_error", browserMayHelp: true });
      expect(JSON.stringify(outcome)).not.toContain("correct horse");
    } finally {
      await tokenSite.stop();
    }
  });
});
