import type Kernel from "@onkernel/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startGuardedLoginSite, type GuardedLoginSite, type Throttle } from "../sites/guarded-login-site.ts";
import { intervalWitness } from "../support/interval-witness.ts";
import { nextFlowState, type Connection } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let site: GuardedLoginSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
let witness: Awaited<ReturnType<typeof intervalWitness>>;

beforeAll(async () => {
  site = await startGuardedLoginSite();
  // 300 s health-check intervals run in 3 s; a site's 600 s Retry-After in 6 s.
  stack = await startTestStack({ timeScale: 0.01 });
  client = officialClient(stack);
  witness = await intervalWitness(client);
});

const created: string[] = [];

// The site is shared: a connection left running would re-auth (and count) in the next test.
afterEach(async () => {
  site.throttle(null);
  await Promise.all(created.splice(0).map((id) => client.auth.connections.delete(id)));
});

afterAll(async () => {
  await witness?.remove();
  await stack?.stop();
  await site?.stop();
});

let profiles = 0;

/** A connection with a stored credential, logged in once by a person through the API. */
async function loggedInConnection(): Promise<{ connection: Connection; credential: string }> {
  const credential = `ledgerly-${++profiles}`;
  await client.credentials.create({ name: credential, domain: "127.0.0.1", values: { identifier: site.user.email, password: site.user.password } });
  const { id } = await client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: `ledgerly-${profiles}`,
    login_url: site.loginUrl,
    credential: { name: credential },
    health_check_interval: 300,
  });
  created.push(id);
  await client.auth.connections.login(id);
  const step = await nextFlowState(client, id);
  const values = Object.fromEntries((step.fields ?? []).map((field) => [field.id, field.type === "password" ? site.user.password : site.user.email]));
  await client.auth.connections.submit(id, { field_values: values });
  const connection = await eventually(async () => {
    const current = await client.auth.connections.retrieve(id);
    return current.flow_status === "SUCCESS" ? current : undefined;
  }, "the person's login to succeed");
  return { connection, credential };
}

async function reauths(id: string) {
  return (await client.auth.connections.timeline(id, { type: "reauth", limit: 100 })).getPaginatedItems();
}

async function healthChecks(id: string) {
  return (await client.auth.connections.timeline(id, { type: "health_check", limit: 100 })).getPaginatedItems();
}

/** The connection once its timeline holds a re-auth that `matches`. */
function reauthThat(id: string, matches: (event: Awaited<ReturnType<typeof reauths>>[number]) => boolean, what: string) {
  return eventually(async () => ((await reauths(id)).some(matches) ? client.auth.connections.retrieve(id) : undefined), what, 40);
}

describe("re-auth that cannot lock the account", () => {
  it("sends a stored credential the site rejects once, then stops until the credential changes", async () => {
    const { connection, credential } = await loggedInConnection();
    expect(connection).toMatchObject({ can_reauth: true, can_reauth_reason: "has_credential" });
    site.changePassword("a new password set elsewhere");
    const sentBefore = site.submissions();

    site.expireSessions();

    const rejected = await reauthThat(connection.id, (event) => event.error_code === "credentials_invalid", "the rejected re-auth");
    expect(rejected).toMatchObject({
      status: "NEEDS_AUTH",
      flow_type: "REAUTH",
      flow_status: "FAILED",
      error_code: "credentials_invalid",
      website_error: "Invalid Email or password.",
      can_reauth: false,
      can_reauth_reason: "requires_external_action",
    });
    expect(site.submissions()).toBe(sentBefore + 1);
    // Checks go on and find the session logged out, but send nothing.
    const checksThen = (await healthChecks(connection.id)).length;
    await witness.intervalsPass(3);
    expect((await healthChecks(connection.id)).length).toBeGreaterThan(checksThen);
    expect(site.submissions()).toBe(sentBefore + 1);

    await client.credentials.update(credential, { values: { password: "a new password set elsewhere" } });

    expect(await client.auth.connections.retrieve(connection.id)).toMatchObject({ can_reauth: true, can_reauth_reason: "has_credential" });
    const back = await reauthThat(connection.id, (event) => event.status === "SUCCESS", "the re-auth with the changed credential");
    expect(back).toMatchObject({ status: "AUTHENTICATED", flow_status: "SUCCESS", can_reauth: true });
    expect(site.submissions()).toBe(sentBefore + 2);
  });

  it.each([
    ["HTTP 429 with Retry-After", { kind: "http_429", retryAfter: "600" }, 600],
    ["a page that says so", { kind: "message", message: "Too many failed login attempts. Try again in 20 minutes." }, 1200],
  ] satisfies [string, Throttle, number][])("stops at a rate-limit answer (%s) and sends nothing more until the site's wait has passed", async (_, throttle, waitSeconds) => {
    const { connection } = await loggedInConnection();
    site.throttle(throttle);
    const sentBefore = site.submissions();

    site.expireSessions();

    const limited = await reauthThat(connection.id, (event) => event.error_code === "rate_limited", "the rate-limited re-auth");
    expect(limited).toMatchObject({ status: "NEEDS_AUTH", flow_status: "FAILED", error_code: "rate_limited", can_reauth: true });
    expect(limited.error_message).toContain(`retry after ${waitSeconds} s`);
    expect(site.submissions()).toBe(sentBefore + 1);
    const limitedEvent = (await reauths(connection.id)).find((event) => event.error_code === "rate_limited")!;
    const retryAt = Date.parse(/re-auth waits until (\S+)$/.exec(limitedEvent.error_message ?? "")![1]!);
    // The site's wait, scaled, counted from after the refused POST.
    expect(retryAt).toBeGreaterThanOrEqual(site.submissionTimes()[sentBefore]! + waitSeconds * 10);

    site.throttle(null);

    const back = await reauthThat(connection.id, (event) => event.status === "SUCCESS", "the re-auth after the wait");
    expect(back).toMatchObject({ status: "AUTHENTICATED", flow_status: "SUCCESS", error_code: null });
    const sent = site.submissionTimes().slice(sentBefore);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBeGreaterThanOrEqual(retryAt);
  });

  it("stops re-auth when the site limits it again after its wait, instead of trying after every wait", async () => {
    const { connection } = await loggedInConnection();
    // Below the one-minute floor: each wait is the scaled minute.
    site.throttle({ kind: "http_429", retryAfter: "10" });
    const sentBefore = site.submissions();

    site.expireSessions();

    const stopped = await reauthThat(connection.id, (event) => event.error_message?.includes("re-auth stops") ?? false, "the second rate-limited re-auth");
    expect(stopped).toMatchObject({ status: "NEEDS_AUTH", error_code: "rate_limited", can_reauth: false, can_reauth_reason: "requires_external_action" });
    expect((await reauths(connection.id)).filter((event) => event.error_code === "rate_limited")).toHaveLength(2);
    expect(site.submissions()).toBe(sentBefore + 2);
    // Checks go on and find the session logged out, but send nothing.
    const checksThen = (await healthChecks(connection.id)).length;
    await witness.intervalsPass(3);
    expect((await healthChecks(connection.id)).length).toBeGreaterThan(checksThen);
    expect(site.submissions()).toBe(sentBefore + 2);
  });
});
