import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workflowTiming } from "#shared/composition/config.ts";
import { credentials } from "#shared/composition/credentials.ts";
import { profileSessions } from "#shared/composition/profile-sessions.ts";
import { secretBox } from "#shared/composition/secrets.ts";
import type { Connection } from "#shared/domain/connection.ts";
import { healthCheckCore, reauthCore, type HealthCheckTaskInput } from "#shared/domain/health-checks.ts";
import { reauthStopped } from "#shared/domain/reauth.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginEngine, ProbeOutcome, StepOutcome } from "#shared/login/types.ts";
import { startGuardedLoginSite, type GuardedLoginSite } from "../sites/guarded-login-site.ts";
import { loggedInUnderTestExecution, servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;
let site: GuardedLoginSite;
let realSuccess: Extract<StepOutcome, { kind: "success" }>;

beforeAll(async () => {
  core = await servicesOnFreshTable();
  site = await startGuardedLoginSite();
  // A success as the engine really reports one (session, evidence), for the fake engine to replay.
  const engine = createLoginEngine({ allowPrivateTargets: true });
  const target = { domain: "127.0.0.1", loginUrl: site.loginUrl, allowedDomains: [] };
  const step = await engine.start(target);
  if (step.kind !== "input") throw new Error(`the guarded site's sign-in page: ${JSON.stringify(step)}`);
  const signedIn = await engine.submit(target, step.state, { field_values: { identifier: site.user.email, password: site.user.password } });
  if (signedIn.kind !== "success") throw new Error(`the guarded site's sign-in: ${JSON.stringify(signedIn)}`);
  // Replayed for a connection to ledger.example.com: the values were typed there.
  realSuccess = { ...signedIn, typedHosts: { identifier: "ledger.example.com", password: "ledger.example.com" } };
});

afterAll(async () => {
  await site?.stop();
  await core?.stack.stop();
});

/** A connection whose re-auth the site stopped by rejecting `credentialId`, as the Reauth task leaves it. */
async function stoppedConnection(org: string, domain: string, credentialName: string, credentialId: string): Promise<Connection> {
  const created = await core.connections.create(org, { domain, profile_name: "p", credential: { name: credentialName }, health_checks: false });
  const record = (await core.connectionStore.get(org, created.id))!;
  const loggedIn = { ...record, can_reauth: true, can_reauth_reason: "requirements_satisfiable" };
  return (await core.connectionStore.guardedUpdate(org, created.id, { executionArn: record.execution_arn! }, {
    status: "NEEDS_AUTH",
    ...reauthStopped(loggedIn, credentialId),
  }))!;
}

describe("a re-auth stopped by a rejected credential", () => {
  it("may try again once that credential is updated, with the reason the last login gave", async () => {
    const org = uniqueOrg();
    const credential = await credentials(core.config).create(org, { name: "shop", domain: "shop.example.com", values: { identifier: "ada", password: "old" } });
    const stopped = await stoppedConnection(org, "shop.example.com", "shop", credential.id);
    const other = await core.connections.create(org, { domain: "other.example.com", profile_name: "p", health_checks: false });
    expect(stopped).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_external_action" });

    await credentials(core.config).update(org, "shop", { values: { password: "new" } });

    expect(await core.connections.get(org, stopped.id)).toMatchObject({ can_reauth: true, can_reauth_reason: "requirements_satisfiable" });
    expect((await core.connectionStore.get(org, stopped.id))?.reauth_rejected_credential).toBeNull();
    expect(await core.connections.get(org, other.id)).toMatchObject({ can_reauth: false, can_reauth_reason: "no_prior_successful_login" });
  });

  it("may try again once another credential is linked, and stays stopped when the link is removed", async () => {
    const org = uniqueOrg();
    const relinked = await stoppedConnection(org, "a.example.com", "first", "cr_first");
    const unlinked = await stoppedConnection(org, "b.example.com", "first", "cr_first");

    const afterRelink = await core.connections.update(org, relinked.id, { credential: { name: "second" } });
    const afterUnlink = await core.connections.update(org, unlinked.id, { credential: null });

    expect(afterRelink).toMatchObject({ can_reauth: true, can_reauth_reason: "requirements_satisfiable", credential: { name: "second" } });
    expect(afterUnlink).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_external_action", credential: null });
  });
});

/**
 * An engine whose sign-in page asks for the stored credential and answers every submission with
 * `answer`, and whose checks find the session as `checks` says, one state per check.
 */
function fakeEngine(answer: StepOutcome, checks: ProbeOutcome["state"][]) {
  let submissions = 0;
  const prompt = {
    discovered_fields: [],
    fields: [
      { id: "identifier", ref: "identifier", type: "identifier" as const },
      { id: "password", ref: "password", type: "password" as const },
    ],
    choices: [],
    mfa_options: [],
    sign_in_options: [],
    pending_sso_buttons: [],
    external_action_message: null,
  };
  const engine: LoginEngine = {
    start: async () => ({ kind: "input", state: {}, prompt, websiteError: null }),
    submit: async () => {
      submissions++;
      return answer;
    },
    release: async () => null,
    probe: async () => {
      const state = checks.shift();
      if (!state) throw new Error("a check the test did not plan");
      return state === "logged_in" ? { state } : { state, reason: `the test says ${state}` };
    },
  };
  return { engine, submissions: () => submissions };
}

/** A logged-in connection with a linked credential whose checks and re-auths the test runs as the workflow's tasks. */
async function loggedInConnection(org: string, engine: LoginEngine) {
  const credential = await credentials(core.config).create(org, { name: "ledger", domain: "ledger.example.com", values: { identifier: "ada", password: "stored" } });
  const created = await core.connections.create(org, { domain: "ledger.example.com", profile_name: "p", credential: { name: "ledger" }, health_checks: false });
  const executionId = await loggedInUnderTestExecution(core, org, created.id, {
    post_login_url: "https://ledger.example.com/dashboard",
    can_reauth: true,
    can_reauth_reason: "has_credential",
  });
  const deps = {
    connections: core.connectionStore,
    engine,
    timing: workflowTiming(core.config),
    timelineRetentionDays: core.config.TIMELINE_RETENTION_DAYS,
    secrets: secretBox(core.config),
  };
  const saved = { state: realSuccess.session, kind: "tar.zst" as const, etag: '"as-logged-in"' };
  const checks = healthCheckCore({
    ...deps,
    sessions: {
      load: async () => saved,
      saveRenewed: async () => {
        throw new Error("a save-back the test did not plan: its engine renews nothing");
      },
    },
  });
  const reauths = reauthCore({ ...deps, sessions: profileSessions(core.config), credentials: credentials(core.config) });
  const input: HealthCheckTaskInput = { org, connection_id: created.id, generation: 0, iteration: 0, execution_id: executionId, execution_started_at: new Date().toISOString() };
  return {
    id: created.id,
    credential,
    /** One turn of the loop: a check, and the re-auth it asks for. */
    async turn(): Promise<{ reauthed: boolean }> {
      const checked = await checks.healthCheck(input);
      if (checked.next !== "reauth") return { reauthed: false };
      await reauths.reauth({ ...input, next_check_at: checked.next_check_at });
      return { reauthed: true };
    },
  };
}

describe("re-auths that send the stored credential with no check finding the session between them", () => {
  const siteError = (code: "internal_error" | "site_unreachable", message: string): StepOutcome => ({ kind: "failure", errorCode: code, message });

  it.each([
    ["an error page after the sign-in POST", () => siteError("internal_error", "the site refused the submitted step (HTTP 400)")],
    ["a server error after the sign-in POST", () => siteError("site_unreachable", "127.0.0.1 answered HTTP 502")],
    ["no session cookie", () => siteError("internal_error", "the site showed no login step but set no cookie, so there is no session to keep")],
    ["a success the next check finds logged out", () => realSuccess],
  ])("stop at the third, until the credential changes: %s", async (_, answer) => {
    const org = uniqueOrg();
    const fake = fakeEngine(answer(), ["logged_out", "logged_out", "logged_out", "logged_out"]);
    const connection = await loggedInConnection(org, fake.engine);

    const turns = [await connection.turn(), await connection.turn(), await connection.turn()];
    const stopped = await core.connections.get(org, connection.id);
    const fourth = await connection.turn();

    expect(turns).toEqual([{ reauthed: true }, { reauthed: true }, { reauthed: true }]);
    expect(stopped).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_external_action" });
    expect(fourth).toEqual({ reauthed: false });
    expect(fake.submissions()).toBe(3);

    await credentials(core.config).update(org, "ledger", { values: { password: "changed" } });

    expect(await core.connections.get(org, connection.id)).toMatchObject({ can_reauth: true, can_reauth_reason: "has_credential" });
    expect((await core.connectionStore.get(org, connection.id))?.unverified_reauths).toBe(0);
  });

  it.each([
    ["finds the session", "logged_in" as const],
    ["cannot tell on a page that looks the same signed in and out, but sees no sign of the session's end", "inconclusive" as const],
  ])("count again from nothing after a check %s", async (_, standing) => {
    const org = uniqueOrg();
    const failing = siteError("internal_error", "the site refused the submitted step (HTTP 400)");
    const fake = fakeEngine(failing, ["logged_out", "logged_out", standing, "logged_out", "logged_out", "logged_out"]);
    const connection = await loggedInConnection(org, fake.engine);

    for (let turn = 0; turn < 5; turn++) await connection.turn();
    const afterTwoMore = await core.connections.get(org, connection.id);
    const third = await connection.turn();

    expect(afterTwoMore).toMatchObject({ can_reauth: true });
    expect(third).toEqual({ reauthed: true });
    expect(fake.submissions()).toBe(5);
    expect(await core.connections.get(org, connection.id)).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_external_action" });
  });
});
