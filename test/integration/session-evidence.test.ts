import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginTarget, StepOutcome } from "#shared/login/types.ts";
import { startSessionSites, type SessionShape, type SessionSites } from "../sites/session-sites.ts";

let sites: SessionSites;

beforeAll(async () => {
  sites = await startSessionSites();
});

afterAll(async () => {
  await sites?.stop();
});

const engine = createLoginEngine({ allowPrivateTargets: true });
const target = (shape: SessionShape): LoginTarget => ({ domain: "127.0.0.1", loginUrl: sites.loginUrl(shape), allowedDomains: [] });

/** A person's login: the identifier and password typed into the form, each step through JSON as between Lambdas. */
async function logIn(shape: SessionShape): Promise<Extract<StepOutcome, { kind: "success" }>> {
  const form = await engine.start(target(shape));
  if (form.kind !== "input") throw new Error(`${shape}: no login form (${JSON.stringify(form)})`);
  const values = Object.fromEntries(
    form.prompt.fields.map((field) => [field.id, field.type === "password" ? sites.user.password : sites.identifierFor(shape)]),
  );
  const outcome = await engine.submit(target(shape), JSON.parse(JSON.stringify(form.state)) as typeof form.state, { field_values: values });
  if (outcome.kind !== "success") throw new Error(`${shape}: login did not succeed (${JSON.stringify(outcome)})`);
  return JSON.parse(JSON.stringify(outcome)) as Extract<StepOutcome, { kind: "success" }>;
}

describe("session evidence learnt at login and looked for by the probe", () => {
  it.each(["wiki", "team", "forum"] as const)("%s: the probe tells the signed-in page from the one a server-side logout leaves", async (shape) => {
    const success = await logIn(shape);
    const probe = () => engine.probe(target(shape), success.session, success.postLoginUrl, success.evidence);

    expect(success.evidence.basis).toBe("verified");
    expect(await probe()).toMatchObject({ state: "logged_in" });
    sites.endSessions(shape);

    expect(await probe()).toMatchObject({ state: "logged_out" });
    // Without evidence (a login from before it was learnt) the same page passes: a 200 with no password form.
    expect(await engine.probe(target(shape), success.session, success.postLoginUrl, null)).toMatchObject({ state: "logged_in" });
  });

  it("keeps what names the account only as salted hashes, and never a password or cookie value", async () => {
    const success = await logIn("team");
    const stored = JSON.stringify(success.evidence);

    expect(success.evidence.signedIn.map((marker) => marker.kind)).toEqual(expect.arrayContaining(["sign_out", "account_name"]));
    expect(stored.toLowerCase()).not.toContain(sites.user.email);
    expect(stored.toLowerCase()).not.toContain("ada");
    expect(stored).not.toContain(sites.user.password);
    for (const cookie of success.session.cookies) expect(stored).not.toContain(cookie.value);
  });

  it("finds the account's name where it showed, with another login's salt", async () => {
    const first = await logIn("wiki");
    const second = await logIn("wiki");
    const names = (outcome: typeof first) => outcome.evidence.signedIn.filter((marker) => marker.kind === "account_name");

    expect(names(first).length).toBeGreaterThan(0);
    expect(names(first)).not.toEqual(names(second));
    const onlyTheName = { ...second.evidence, signedIn: names(second), signInPlaces: [] };
    expect(await engine.probe(target("wiki"), second.session, second.postLoginUrl, onlyTheName)).toEqual({ state: "logged_in" });
    sites.endSessions("wiki");
    expect(await engine.probe(target("wiki"), second.session, second.postLoginUrl, onlyTheName)).toMatchObject({ state: "logged_out" });
  });

  it("team: the welcome banner's cookie, deleted by the page after the login, is no session cookie", async () => {
    const success = await logIn("team");

    expect(success.evidence.sessionCookies).toContain("team_session");
    expect(success.evidence.sessionCookies).not.toContain("team_welcome");
    expect(await engine.probe(target("team"), success.session, success.postLoginUrl, success.evidence)).toEqual({ state: "logged_in" });
  });

  it.each([
    [429, "the site is limiting requests (HTTP 429)"],
    [404, "may have moved"],
  ] as const)("wiki: an HTTP %i answer leaves the session's state unknown, not lost", async (status, reason) => {
    const success = await logIn("wiki");
    const probe = () => engine.probe(target("wiki"), success.session, success.postLoginUrl, success.evidence);

    sites.holdPages("wiki", status);
    try {
      expect(await probe()).toEqual({ state: "unreachable", reason: expect.stringContaining(reason) });
    } finally {
      sites.holdPages("wiki", null);
    }
    expect(await probe()).toEqual({ state: "logged_in" });
  });

  it("docs: a page that looks the same with and without the session is unverifiable, and its probe inconclusive", async () => {
    const success = await logIn("docs");

    expect(success.evidence).toMatchObject({ basis: "unverifiable", signedIn: [], signInPlaces: [] });
    expect(await engine.probe(target("docs"), success.session, success.postLoginUrl, success.evidence)).toMatchObject({ state: "inconclusive" });
  });
});
