import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflowTiming } from "#shared/composition/config.ts";
import { credentials } from "#shared/composition/credentials.ts";
import { profileSessions } from "#shared/composition/profile-sessions.ts";
import { secretBox } from "#shared/composition/secrets.ts";
import type { TimelineEvent } from "#shared/domain/connection.ts";
import { loginOutcomes } from "#shared/domain/flows/outcomes.ts";
import { healthCheckCore, reauthCore, type HealthCheckTaskInput } from "#shared/domain/health-checks.ts";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import { chooseLoginEngine } from "#shared/login/engine-choice.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginEngine, LoginTarget } from "#shared/login/types.ts";
import { startAppShellSite, type AppShellSite } from "../sites/app-shell-site.ts";
import { asInput, asSuccess, submitThroughJson, type Success } from "../support/engine-steps.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { loggedInUnderTestExecution, servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;
let site: AppShellSite;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let engine: LoginEngine;

beforeAll(async () => {
  core = await servicesOnFreshTable();
  site = await startAppShellSite();
  chromium = await loginChromiumForTests();
  // Both engines behind the choice, as the service composes them, the browser on the test's Chromium.
  engine = chooseLoginEngine({ http: createLoginEngine({ allowPrivateTargets: true }), browser: createBrowserLoginEngine({ openBrowser: chromium.openBrowser }) });
});

afterAll(async () => {
  const leftBehind = chromium?.running();
  await chromium?.dispose();
  await site?.stop();
  await core?.stack.stop();
  expect(leftBehind).toEqual([]);
});

const target = (loginUrl: string): LoginTarget => ({ domain: "127.0.0.1", loginUrl, allowedDomains: [] });

/** A person's login from `loginUrl`: the email and password typed, in whichever engine the choice runs it. */
async function logIn(loginUrl: string): Promise<Success> {
  const form = asInput(await engine.start(target(loginUrl)));
  const values = Object.fromEntries(form.prompt.fields.map((field) => [field.id, field.type === "password" ? site.user.password : site.user.email]));
  return asSuccess(await submitThroughJson(engine, target(loginUrl), form, { field_values: values }));
}

/**
 * A connection the login `success` ended, recorded as a login flow records it (session, evidence,
 * engine, saved credential), whose health checks and re-auths the test runs as the workflow's tasks.
 */
async function loggedInConnection(loginUrl: string, success: Success) {
  const org = uniqueOrg();
  const created = await core.connections.create(org, { domain: "127.0.0.1", profile_name: "p", login_url: loginUrl, health_checks: false });
  const executionId = await loggedInUnderTestExecution(core, org, created.id, { post_login_url: success.postLoginUrl });
  const deps = {
    connections: core.connectionStore,
    engine,
    sessions: profileSessions(core.config),
    credentials: credentials(core.config),
    secrets: secretBox(core.config),
    timing: workflowTiming(core.config),
    timelineRetentionDays: core.config.TIMELINE_RETENTION_DAYS,
  };
  const recorded = await loginOutcomes(deps).succeed((await core.connectionStore.get(org, created.id))!, { executionArn: executionId }, success);
  expect(recorded).toBe(true);
  const checks = healthCheckCore(deps);
  const reauths = reauthCore(deps);
  const input: HealthCheckTaskInput = { org, connection_id: created.id, generation: 0, iteration: 0, execution_id: executionId, execution_started_at: new Date().toISOString() };
  const seen = new Set<string>();
  return {
    /** One health check: where the loop goes, the timeline event it added, and the record after it. */
    async check() {
      const output = await checks.healthCheck(input);
      const events = (await core.connections.timeline(org, created.id, { type: "health_check", limit: 100, offset: 0 })).items;
      const added = events.filter((event) => !seen.has(event.id));
      for (const event of added) seen.add(event.id);
      expect(added).toHaveLength(1);
      return { output, event: added[0] as TimelineEvent, record: (await core.connectionStore.get(org, created.id))! };
    },
    /** The re-auth a check asked for, with the credential the login saved. */
    async reauth(nextCheckAt: string) {
      await reauths.reauth({ ...input, next_check_at: nextCheckAt });
      return (await core.connectionStore.get(org, created.id))!;
    },
  };
}

describe("health checks that can tell", () => {
  /** What a check's timeline event says of the session, as `[status, error_code]`. */
  const verdictOf = (found: { event: TimelineEvent }) => [found.event.status, found.event.error_code ?? null];

  it("an HTTP login that lands on an app shell is checked in the browser: logged in, then logged out once the server ended every session, and re-auth follows", async () => {
    const success = await logIn(site.loginUrl);
    expect(success).toMatchObject({ engine: "http", postLoginUrl: `${site.url}/`, evidence: { basis: "unverifiable" } });
    const cookie = success.session.cookies.map((each) => `${each.name}=${each.value}`).join("; ");
    const shellWith = await (await fetch(`${site.url}/`, { headers: { cookie } })).text();
    const shellWithout = await (await fetch(`${site.url}/`)).text();
    expect(shellWith).toBe(shellWithout);
    const connection = await loggedInConnection(site.loginUrl, success);

    const first = await connection.check();
    const second = await connection.check();
    expect([first, second].map(verdictOf)).toEqual([
      ["AUTHENTICATED", null],
      ["AUTHENTICATED", null],
    ]);
    expect([first, second].map((found) => found.event.checked_with)).toEqual(["browser", "browser"]);
    // What the browser saw tell the two apart is kept for the checks after it.
    expect(first.record).toMatchObject({ status: "AUTHENTICATED", session_evidence: "verified", login_engine: "http" });

    site.endAllSessions();
    const loggedOut = await connection.check();
    expect(verdictOf(loggedOut)).toEqual(["NEEDS_AUTH", "logged_out"]);
    expect(loggedOut.output.next).toBe("reauth");
    expect(loggedOut.event).toMatchObject({ checked_with: "browser", error_message: expect.stringContaining("/api/me") });
    expect(loggedOut.record.status).toBe("NEEDS_AUTH");

    const loginsBefore = site.logins();
    const reauthed = await connection.reauth(loggedOut.output.next_check_at);
    expect(reauthed).toMatchObject({ status: "AUTHENTICATED", login_engine: "http", session_evidence: "unverifiable", inconclusive_checks: 0 });
    expect(site.logins()).toBe(loginsBefore + 1);
    const afterReauth = await connection.check();
    expect(verdictOf(afterReauth)).toEqual(["AUTHENTICATED", null]);
    expect(afterReauth.event.checked_with).toBe("browser");
  });

  it("a check that cannot tell three times in a row asks the other engine, says so on the timeline, and the checks after it keep to that engine", async () => {
    // The classic app's sign-in is drawn by script: the browser logs in, and its loading screen is the same for everyone.
    const success = await logIn(site.classicLoginUrl);
    expect(success).toMatchObject({ engine: "browser", postLoginUrl: `${site.url}/classic/home`, evidence: { basis: "unverifiable" } });
    const connection = await loggedInConnection(site.classicLoginUrl, success);

    const checks = [await connection.check(), await connection.check(), await connection.check(), await connection.check()];
    site.endAllSessions();
    const loggedOut = await connection.check();

    expect(checks.map(verdictOf)).toEqual([
      ["AUTHENTICATED", "session_unverifiable"],
      ["AUTHENTICATED", "session_unverifiable"],
      ["AUTHENTICATED", null],
      ["AUTHENTICATED", null],
    ]);
    expect(verdictOf(loggedOut)).toEqual(["NEEDS_AUTH", "logged_out"]);
    expect([...checks, loggedOut].map((found) => found.event.checked_with)).toEqual(["browser", "browser", "http", "http", "http"]);
    expect([...checks, loggedOut].map((found) => found.event.note ?? null)).toEqual([
      null,
      null,
      "3 checks in a row could not tell in the browser whether the session works: this one asked over HTTP",
      null,
      null,
    ]);
    expect(checks.map((found) => found.record.inconclusive_checks)).toEqual([1, 2, 0, 0]);
    // What the HTTP engine learnt at the third check is what the checks after it look for.
    expect(checks[2]!.record.session_evidence).toBe("verified");
  });
});
