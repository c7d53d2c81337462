import type Kernel from "@onkernel/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startJudgementSites, type JudgementApp, type JudgementSites } from "../sites/judgement-sites.ts";
import { driveLogin, type Connection } from "../support/login-flows.ts";
import { officialClient, startTestStack } from "../support/stack.ts";
import { patientMs } from "../support/patience.ts";

let sites: JudgementSites;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  sites = await startJudgementSites();
  stack = await startTestStack({ timeScale: 0.05 });
  client = officialClient(stack);
});

afterAll(async () => {
  await stack?.stop();
  await sites?.stop();
});

let profiles = 0;
/** A person's login on `app` through the official client: the email and password typed into the one form it shows. */
async function logIn(app: JudgementApp): Promise<Connection[]> {
  const created = await client.auth.connections.create({ domain: "127.0.0.1", profile_name: `judged-${app}-${++profiles}`, login_url: sites.loginUrl(app), health_checks: false });
  return driveLogin(client, created.id, (connection) => ({
    field_values: Object.fromEntries((connection.fields ?? []).map((field) => [field.id, field.type === "password" ? sites.user.password : sites.user.email])),
  }));
}

describe("connections whose login ends on a page that is easy to misjudge", () => {
  it("desk: the dashboard that mentions login is signed in after the one form", async () => {
    const states = await logIn("desk");

    expect(states).toHaveLength(2);
    expect(states.at(-1)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
  }, patientMs(60_000));

  it("vault: a security check drawn on a canvas leaves the connection failed, not AUTHENTICATED", async () => {
    const states = await logIn("vault");

    expect(states).toHaveLength(2);
    expect(states.at(-1)).toMatchObject({ flow_status: "FAILED", error_code: "unsupported_auth_method" });
    expect(states.at(-1)!.status).not.toBe("AUTHENTICATED");
  }, patientMs(90_000));
});
