import { describe, expect, it } from "vitest";
import { parseAuthChallenges } from "#shared/login/http-auth.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginEngine, LoginTarget, StepOutcome } from "#shared/login/types.ts";
import { startBasicAuthSite } from "../sites/basic-auth-site.ts";
import { browserEngineFile } from "../support/browser-engine-file.ts";
import { asInput, asSuccess, submitThroughJson } from "../support/engine-steps.ts";
import { patientMs } from "../support/patience.ts";

/**
 * Apps that ask for the password with HTTP Basic authentication (a 401 and `WWW-Authenticate:
 * Basic`, the browser's own prompt): a login step like a form's, answered with an `Authorization`
 * header, whose session is the cookie the app sets; never the password itself. Both engines.
 */

const file = browserEngineFile(startBasicAuthSite);
const engines: Record<"http" | "browser", () => LoginEngine> = {
  http: () => createLoginEngine({ allowPrivateTargets: true }),
  browser: () => file.engine,
};
const targetOf = (loginUrl: string): LoginTarget => ({ domain: "127.0.0.1", loginUrl, allowedDomains: [] });

function failure(outcome: StepOutcome): Extract<StepOutcome, { kind: "failure" }> {
  expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: "failure" });
  return outcome as Extract<StepOutcome, { kind: "failure" }>;
}

describe.each(["http", "browser"] as const)("the %s engine", (kind) => {
  const timeout = patientMs(kind === "browser" ? 60_000 : 10_000);
  it("asks the Basic challenge's user name and password, logs in, and keeps the session cookie that opens the app", async () => {
    const { site } = file;
    const engine = engines[kind]();
    const target = targetOf(site.url);
    const first = asInput(await engine.start(target));
    expect(first.prompt.fields.map((field) => [field.ref, field.type])).toEqual([
      ["identifier", "identifier"],
      ["password", "password"],
    ]);
    expect(first.prompt.discovered_fields.map((field) => field.type)).toEqual(["text", "password"]);

    const success = asSuccess(await submitThroughJson(engine, target, first, { fields: { identifier: site.user.name, password: site.user.password } }));

    expect(success.session.cookies.map((cookie) => cookie.name)).toEqual([site.sessionCookie]);
    expect(JSON.stringify(success.session)).not.toContain(site.user.password);
    expect(success.durableValues).toEqual({ identifier: site.user.name, password: site.user.password });
    expect(success.evidence.basis).toBe("verified");
    expect(await engine.probe(target, success.session, success.postLoginUrl, success.evidence)).toMatchObject({ state: "logged_in" });
    site.endSessions();
    expect(await engine.probe(target, success.session, success.postLoginUrl, success.evidence)).toMatchObject({ state: "logged_out" });
  }, timeout);

  it("takes a 401 to a wrong password as a rejection, with the site's message when its page says one, and ends credentials_invalid at the third", async () => {
    const { site } = file;
    const engine = engines[kind]();
    const target = targetOf(site.url);
    let step = asInput(await engine.start(target));
    for (let attempt = 1; attempt <= 2; attempt++) {
      step = asInput(await submitThroughJson(engine, target, step, { fields: { identifier: site.user.name, password: `wrong-${attempt}` } }));
      expect(step.websiteError).toBe("Invalid user name or password");
      expect(step.prompt.fields.map((field) => field.type)).toEqual(["identifier", "password"]);
    }
    const third = failure(await submitThroughJson(engine, target, step, { fields: { identifier: site.user.name, password: "wrong-3" } }));
    expect(third.errorCode).toBe("credentials_invalid");
  }, timeout);

  it("gives no site message for a 401 page that says nothing about the attempt", async () => {
    const { site } = file;
    const engine = engines[kind]();
    const target = targetOf(site.noCookieUrl);
    const first = asInput(await engine.start(target));
    const again = asInput(await submitThroughJson(engine, target, first, { fields: { identifier: site.user.name, password: "wrong" } }));
    expect(again.websiteError).toBeNull();
    await engine.release(again.state);
  }, timeout);

  it("fails with the reason when the app sets no session cookie, and the password is nowhere in the outcome", async () => {
    const { site } = file;
    const engine = engines[kind]();
    const target = targetOf(site.noCookieUrl);
    const first = asInput(await engine.start(target));
    const outcome = failure(await submitThroughJson(engine, target, first, { fields: { identifier: site.user.name, password: site.user.password } }));

    expect(outcome.errorCode).toBe("unsupported_auth_method");
    expect(outcome.message).toMatch(/no session cookie/);
    expect(outcome.browserMayHelp).toBeUndefined();
    const text = JSON.stringify(outcome);
    expect(text).not.toContain(site.user.password);
    expect(text).not.toContain(Buffer.from(`${site.user.name}:${site.user.password}`).toString("base64"));
  }, timeout);

  it("sends the password to the challenge's origin only, never on a redirect to another", async () => {
    const { site } = file;
    const engine = engines[kind]();
    const target = targetOf(site.elsewhereUrl);
    const first = asInput(await engine.start(target));
    const before = site.authorizationsElsewhere.length;
    await submitThroughJson(engine, target, first, { fields: { identifier: site.user.name, password: site.user.password } });
    const sent = site.authorizationsElsewhere.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((authorization) => authorization === null)).toBe(true);
  }, timeout);

  it("refuses to send a stored credential to a host outside its domain", async () => {
    const { site } = file;
    const engine = engines[kind]();
    const target = targetOf(site.url);
    const first = asInput(await engine.start(target));
    const outcome = await engine.submit(target, first.state, { fields: { identifier: site.user.name, password: site.user.password } }, { credentialDomain: "example.com" });
    expect(failure(outcome).errorCode).toBe("credential_domain_mismatch");
  }, timeout);
});

describe("WWW-Authenticate", () => {
  it("reads every challenge of a header, quoted and token values, and several schemes", () => {
    expect(parseAuthChallenges(`Negotiate abc==, Basic realm="Acme \\"Router\\"", charset="UTF-8", Bearer realm=api`)).toEqual([
      { scheme: "negotiate", params: {} },
      { scheme: "basic", params: { realm: 'Acme "Router"', charset: "UTF-8" } },
      { scheme: "bearer", params: { realm: "api" } },
    ]);
    expect(parseAuthChallenges(`Digest realm="a, b", qop="auth", Basic`)).toEqual([
      { scheme: "digest", params: { realm: "a, b", qop: "auth" } },
      { scheme: "basic", params: {} },
    ]);
  });
});
