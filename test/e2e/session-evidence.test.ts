import type Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSessionSites, type SessionShape, type SessionSites } from "../sites/session-sites.ts";
import { nextFlowState, type Connection } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let sites: SessionSites;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  sites = await startSessionSites();
  // 300 s health-check intervals run in 3 s.
  stack = await startTestStack({ timeScale: 0.01 });
  client = officialClient(stack);
});

afterAll(async () => {
  await stack?.stop();
  await sites?.stop();
});

/** The resource's field the official client passes through without knowing it. */
const evidenceOf = (connection: Connection) => (connection as Connection & { session_evidence?: string | null }).session_evidence;

let profiles = 0;
async function checkedConnection(shape: SessionShape) {
  return client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: `evidence-${shape}-${++profiles}`,
    login_url: sites.loginUrl(shape),
    health_check_interval: 300,
  });
}

/** A person's login through the gateway: the identifier and password typed; save_credentials (the default) keeps them for re-auth. */
async function logIn(shape: SessionShape, id: string): Promise<Connection> {
  await client.auth.connections.login(id);
  const form = await nextFlowState(client, id);
  const values = Object.fromEntries((form.fields ?? []).map((field) => [field.id, field.type === "password" ? sites.user.password : sites.identifierFor(shape)]));
  await client.auth.connections.submit(id, { field_values: values });
  return eventually(async () => {
    const connection = await client.auth.connections.retrieve(id);
    return connection.flow_status === "IN_PROGRESS" ? undefined : connection;
  }, `the login of ${id} to end`);
}

async function timeline(id: string) {
  return (await client.auth.connections.timeline(id, { limit: 100 })).getPaginatedItems().reverse();
}

describe("health checks that look for what the login showed", () => {
  it.each(["wiki", "team", "forum"] as const)(
    "%s: a session ended on the server turns NEEDS_AUTH at the next check, and re-auth brings it back",
    async (shape) => {
      const created = await checkedConnection(shape);
      const loggedIn = await logIn(shape, created.id);
      expect(loggedIn).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", can_reauth: true });
      expect(evidenceOf(loggedIn)).toBe("verified");
      await eventually(
        async () => ((await timeline(created.id)).some((event) => event.type === "health_check" && event.status === "AUTHENTICATED" && !event.error_code) ? true : undefined),
        "a check that finds the session",
      );
      const loginsBefore = sites.logins(shape);

      sites.endSessions(shape);

      const events = await eventually(async () => {
        const items = await timeline(created.id);
        return items.some((event) => event.type === "reauth" && event.status === "SUCCESS") ? items : undefined;
      }, "a successful re-auth", 40);
      const loggedOut = events.findIndex((event) => event.type === "health_check" && event.status === "NEEDS_AUTH" && event.error_code === "logged_out");
      const reauthed = events.findIndex((event) => event.type === "reauth" && event.status === "SUCCESS");
      expect(loggedOut).toBeGreaterThanOrEqual(0);
      expect(reauthed).toBeGreaterThan(loggedOut);
      expect(sites.logins(shape)).toBe(loginsBefore + 1);
      const after = await client.auth.connections.retrieve(created.id);
      expect(after).toMatchObject({ status: "AUTHENTICATED", flow_type: "REAUTH", flow_status: "SUCCESS" });
      expect(evidenceOf(after)).toBe("verified");
      await client.auth.connections.delete(created.id);
    },
  );

  it("docs: a page that looks the same signed in and out is reported unverifiable, and no check claims the session from it", async () => {
    const created = await checkedConnection("docs");
    const loggedIn = await logIn("docs", created.id);
    expect(loggedIn).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
    expect(evidenceOf(loggedIn)).toBe("unverifiable");
    const checksAfterLogin = async () => {
      const items = await timeline(created.id);
      const login = items.findIndex((event) => event.type === "login" && event.status === "SUCCESS");
      return items.slice(login + 1).filter((event) => event.type === "health_check");
    };
    await eventually(async () => ((await checksAfterLogin()).length >= 1 ? true : undefined), "a check after the login");

    sites.endSessions("docs");
    const checked = await checksAfterLogin();
    const later = await eventually(async () => {
      const checks = await checksAfterLogin();
      return checks.length >= checked.length + 2 ? checks : undefined;
    }, "two more checks");

    // Every check, before and after the server ended the session: the status the login left, never a plain AUTHENTICATED.
    for (const check of later) {
      expect(check).toMatchObject({ status: "AUTHENTICATED", error_code: "session_unverifiable", error_message: expect.stringContaining("cannot tell signed-in from signed-out") });
    }
    expect((await timeline(created.id)).some((event) => event.type === "reauth")).toBe(false);
    expect(await client.auth.connections.retrieve(created.id)).toMatchObject({ status: "AUTHENTICATED", session_evidence: "unverifiable" });
    await client.auth.connections.delete(created.id);
  });
});
