import { ListExecutionsCommand } from "@aws-sdk/client-sfn";
import type Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { officialSfnClient } from "../support/official-sfn.ts";
import { loadConfig } from "#shared/config.ts";
import { startLoginSite, type LoginShape, type LoginSite } from "../sites/login-site.ts";
import { answerAs, cookieHeader, downloadedSession, driveLogin, flowStatusesAcrossDelete, logIn, nextFlowState, type Connection } from "../support/login-flows.ts";
import { chromiumChildren } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let site: LoginSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  site = await startLoginSite();
  // 300 s health-check intervals run in 9 s; a flow waits 18 s for input, 36 s in all, room for a loaded CI machine.
  stack = await startTestStack({ timeScale: 0.03 });
  client = officialClient(stack);
});

afterAll(async () => {
  await stack?.stop();
  await site?.stop();
});

let profiles = 0;
async function connectionFor(shape: LoginShape, extra: Record<string, unknown> = {}) {
  return client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: `${shape}-${++profiles}`,
    login_url: `${site.url}/${shape}/login`,
    health_checks: false,
    ...extra,
  });
}

async function expectLoggedInWithDownloadedProfile(profileName: string, shape: LoginShape) {
  const session = await downloadedSession(client, profileName);
  const account = `${site.url}/${shape}/account`;
  const response = await fetch(account, { headers: { cookie: cookieHeader(session, account) }, redirect: "manual" });
  expect(response.status).toBe(200);
  expect(await response.text()).toContain(`Welcome, ${site.user.email}`);
}

describe("login flows through the gateway, driven by the official client", () => {
  const shapes: { shape: LoginShape; options?: Parameters<typeof logIn>[4]; extra?: Record<string, unknown> }[] = [
    { shape: "plain" },
    { shape: "two-step" },
    { shape: "totp" },
    { shape: "sms" },
    { shape: "mfa-picker", options: { mfa: /authenticator/i } },
    { shape: "mfa-picker", options: { mfa: /text/i } },
    { shape: "accounts", options: { account: /acme/i } },
    { shape: "sso", options: { sso: true }, extra: { allowed_domains: ["localhost"] } },
  ];

  it.each(shapes)("logs in to the $shape shape, and the downloaded profile's cookies log a fresh client in", async ({ shape, options, extra }) => {
    const created = await connectionFor(shape, extra);
    const before = site.logins(shape);

    const states = await driveLogin(client, created.id, (connection) => answerAs(site, shape, connection, options));

    const ended = states.at(-1) as Connection;
    expect(ended).toMatchObject({ flow_status: "SUCCESS", flow_step: "COMPLETED", status: "AUTHENTICATED" });
    // A site that works over HTTP logs in over HTTP: no step held a browser, and none was started.
    expect(states.map((state) => state.browser_session_id)).toEqual(states.map(() => null));
    expect(chromiumChildren()).toEqual([]);
    expect(ended.post_login_url).toContain(`/${shape}/account`);
    expect(site.logins(shape)).toBe(before + 1);
    await expectLoggedInWithDownloadedProfile(created.profile_name, shape);
    // save_credentials (the default): the durable values typed, never a one-time code, in a linked credential.
    const credential = await client.credentials.retrieve(ended.credential?.name ?? "");
    expect(credential.value_keys).toEqual(expect.arrayContaining(["identifier", "password"]));
    expect((credential.value_keys ?? []).filter((key) => /code|otp/i.test(key))).toEqual([]);
    const timeline = await client.auth.connections.timeline(created.id, { type: "login" });
    expect(timeline.getPaginatedItems()[0]).toMatchObject({ type: "login", status: "SUCCESS" });
  });

  it("shows the site's wrong-password message and asks again; the retry succeeds", async () => {
    const created = await connectionFor("plain");
    await client.auth.connections.login(created.id);
    const first = await nextFlowState(client, created.id);
    await client.auth.connections.submit(created.id, answerAs(site, "plain", first, { password: "wrong horse" }));

    const retry = await eventually(async () => {
      const connection = await client.auth.connections.retrieve(created.id);
      return connection.flow_step === "AWAITING_INPUT" && connection.website_error ? connection : undefined;
    }, "the website error");
    expect(retry.website_error).toMatch(/incorrect email or password/i);
    expect(retry.flow_status).toBe("IN_PROGRESS");
    await client.auth.connections.submit(created.id, answerAs(site, "plain", retry));

    const ended = await eventually(async () => {
      const connection = await client.auth.connections.retrieve(created.id);
      return connection.flow_status === "IN_PROGRESS" ? undefined : connection;
    }, "the flow to end");
    expect(ended).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", website_error: null });
  });

  it("fails a captcha-protected login with captcha_blocked and leaves the profile without a session", async () => {
    const created = await connectionFor("captcha");

    const ended = await logIn(client, site, "captcha", created.id);

    expect(ended).toMatchObject({ flow_status: "FAILED", error_code: "captcha_blocked", status: "NEEDS_AUTH" });
    await expect(client.profiles.download(created.profile_name)).rejects.toMatchObject({ status: 404 });
  });

  it("answers a login at once, without a flow, while the saved session still works", async () => {
    const created = await connectionFor("plain");
    const first = await logIn(client, site, "plain", created.id);
    const loginsBefore = site.logins("plain");

    const again = await client.auth.connections.login(created.id);

    expect(again).toMatchObject({ id: created.id, flow_type: "LOGIN" });
    expect(await client.auth.connections.retrieve(created.id)).toMatchObject({ flow_status: "SUCCESS", last_auth_at: first.last_auth_at });
    expect(site.logins("plain")).toBe(loginsBefore);
    const sfn = officialSfnClient(stack.sfnEndpoint);
    const executions = await sfn.send(new ListExecutionsCommand({ stateMachineArn: loadConfig().STATE_MACHINE_ARN }));
    expect(executions.executions?.filter((execution) => execution.name?.startsWith(`${created.id}-login-`))).toHaveLength(1);
  });

  it("a second login while one waits for input rejoins the same flow", async () => {
    const created = await connectionFor("plain");
    const first = await client.auth.connections.login(created.id);
    await nextFlowState(client, created.id);

    const second = await client.auth.connections.login(created.id);

    expect(second.flow_expires_at).toBe((await client.auth.connections.retrieve(created.id)).flow_expires_at);
    expect(second.handoff_code).not.toBe(first.handoff_code);
    const sfn = officialSfnClient(stack.sfnEndpoint);
    const running = await sfn.send(new ListExecutionsCommand({ stateMachineArn: loadConfig().STATE_MACHINE_ARN, statusFilter: "RUNNING" }));
    expect(running.executions?.filter((execution) => execution.name?.startsWith(`${created.id}-login-`))).toHaveLength(1);
  });

  it("answers 409 to a submit when no flow waits for input, and 400 to one that answers nothing, changing nothing", async () => {
    const created = await connectionFor("plain");

    await expect(client.auth.connections.submit(created.id, { fields: { password: "x" } })).rejects.toMatchObject({ status: 409 });
    await client.auth.connections.login(created.id);
    await nextFlowState(client, created.id);
    const waiting = await client.auth.connections.retrieve(created.id);
    await expect(client.auth.connections.submit(created.id, { fields: {} })).rejects.toMatchObject({ status: 400 });
    await expect(client.auth.connections.submit(created.id, { field_values: { shoe_size: "44" } })).rejects.toMatchObject({
      status: 400,
      error: { message: expect.stringContaining("unknown field 'shoe_size'") },
    });
    await expect(client.auth.connections.submit(created.id, { selected_choice_id: "nope" })).rejects.toMatchObject({ status: 400 });
    expect(await client.auth.connections.retrieve(created.id)).toEqual(waiting);
  });

  it("cancels a flow when its connection is deleted mid-flow: the events stream ends CANCELED and the execution is stopped", async () => {
    const created = await connectionFor("totp");
    await client.auth.connections.login(created.id);
    await nextFlowState(client, created.id);
    const seen = await flowStatusesAcrossDelete(client, created.id);

    expect(seen.at(-1)).toBe("CANCELED");
    const sfn = officialSfnClient(stack.sfnEndpoint);
    const executions = await sfn.send(new ListExecutionsCommand({ stateMachineArn: loadConfig().STATE_MACHINE_ARN }));
    const ofConnection = executions.executions?.filter((execution) => execution.name?.startsWith(created.id)) ?? [];
    expect(ofConnection.length).toBeGreaterThanOrEqual(2);
    expect(ofConnection.filter((execution) => execution.status === "RUNNING")).toEqual([]);
    expect(ofConnection.find((execution) => execution.name?.startsWith(`${created.id}-login-`))?.status).toBe("ABORTED");
  });
});

describe("health checks and re-authentication", () => {
  it("finds an expired session at the next check and re-authenticates with the saved credential and its TOTP secret", async () => {
    const credential = await client.credentials.create({
      name: `totp-cred-${profiles}`,
      domain: "127.0.0.1",
      values: { identifier: site.user.email, password: site.user.password },
      totp_secret: site.user.totpSecret,
    });
    const created = await connectionFor("totp", { credential: { name: credential.name }, health_checks: true, health_check_interval: 300 });
    const ended = await logIn(client, site, "totp", created.id);
    expect(ended).toMatchObject({ flow_status: "SUCCESS", can_reauth: true, can_reauth_reason: "requirements_satisfiable" });
    const loginsBefore = site.logins("totp");

    site.expireSessions("totp");

    const events = await eventually(async () => {
      const page = await client.auth.connections.timeline(created.id, { limit: 100 });
      const items = page.getPaginatedItems();
      return items.some((event) => event.type === "reauth" && event.status === "SUCCESS") ? items.reverse() : undefined;
    }, "a successful re-auth on the timeline", 40);
    const loggedOut = events.findIndex((event) => event.type === "health_check" && event.status === "NEEDS_AUTH");
    const reauthed = events.findIndex((event) => event.type === "reauth" && event.status === "SUCCESS");
    expect(loggedOut).toBeGreaterThanOrEqual(0);
    expect(reauthed).toBeGreaterThan(loggedOut);
    expect(site.logins("totp")).toBeGreaterThan(loginsBefore);
    expect(await client.auth.connections.retrieve(created.id)).toMatchObject({ status: "AUTHENTICATED", flow_type: "REAUTH", flow_status: "SUCCESS" });
    await expectLoggedInWithDownloadedProfile(created.profile_name, "totp");
  });

  it("leaves an SMS-protected connection NEEDS_AUTH with can_reauth_reason requires_sms_code", async () => {
    const created = await connectionFor("sms", { health_checks: true, health_check_interval: 300 });
    const ended = await logIn(client, site, "sms", created.id);
    expect(ended).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", can_reauth: false, can_reauth_reason: "requires_sms_code" });
    const loginsBefore = site.logins("sms");

    site.expireSessions("sms");

    const after = await eventually(async () => {
      const connection = await client.auth.connections.retrieve(created.id);
      return connection.status === "NEEDS_AUTH" ? connection : undefined;
    }, "the check to find the session logged out", 40);
    expect(after).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_sms_code" });
    const timeline = await client.auth.connections.timeline(created.id, { limit: 100 });
    expect(timeline.getPaginatedItems().some((event) => event.type === "reauth")).toBe(false);
    expect(site.logins("sms")).toBe(loginsBefore);
  });
});
