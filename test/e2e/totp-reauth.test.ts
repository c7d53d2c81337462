import type Kernel from "@onkernel/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTotpSites, totpShapes, type TotpSites } from "../sites/totp-sites.ts";
import { driveLogin, type Connection } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

/**
 * Code pages that do not say the code is an authenticator's ("One-Time Password", "Please enter your
 * two-factor authentication code", "Verification code"): a person logs in with the code their
 * authenticator shows for the linked credential's TOTP secret, and once the app ends the session the
 * re-auth answers the code from that secret, unattended, through the official client's API.
 */
let sites: TotpSites;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  sites = await startTotpSites();
  // 300 s health-check intervals run in 3 s.
  stack = await startTestStack({ timeScale: 0.01 });
  client = officialClient(stack);
});

const created: string[] = [];

afterEach(async () => {
  await Promise.all(created.splice(0).map((id) => client.auth.connections.delete(id)));
});

afterAll(async () => {
  await stack?.stop();
  await sites?.stop();
});

/** The person at the hosted login page: their username and password, then what their authenticator shows. */
function person(connection: Connection) {
  const values: Record<string, string> = {};
  for (const field of connection.fields ?? []) {
    if (field.type === "identifier") values[field.id] = sites.user.email;
    else if (field.type === "password") values[field.id] = sites.user.password;
    else if (field.type === "totp_code" || field.type === "code") values[field.id] = sites.totp();
  }
  return { field_values: values };
}

describe("a code page that does not name the authenticator", () => {
  it.each(totpShapes)("%s: the login records the code as the credential's TOTP, and the re-auth answers it from the stored secret", async (shape) => {
    const credential = `${shape}-credential`;
    await client.credentials.create({ name: credential, domain: "127.0.0.1", values: { identifier: sites.user.email, password: sites.user.password }, totp_secret: sites.user.totpSecret });
    const made = await client.auth.connections.create({
      domain: "127.0.0.1",
      profile_name: `totp-${shape}`,
      login_url: sites.loginUrl(shape),
      health_check_interval: 300,
      credential: { name: credential },
    });
    created.push(made.id);

    const ended = (await driveLogin(client, made.id, person)).at(-1) as Connection;

    expect(ended).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", can_reauth: true, can_reauth_reason: "requirements_satisfiable" });
    const codesBefore = sites.codesPosted(shape);
    const loginsBefore = sites.logins(shape);

    sites.expireSessions(shape);

    const back = await eventually(async () => {
      const events = (await client.auth.connections.timeline(made.id, { type: "reauth", limit: 100 })).getPaginatedItems();
      return events.length > 0 ? client.auth.connections.retrieve(made.id) : undefined;
    }, `the re-auth of ${shape}`, 40);
    expect(back).toMatchObject({ status: "AUTHENTICATED", flow_type: "REAUTH", flow_status: "SUCCESS", can_reauth: true });
    expect(sites.logins(shape)).toBe(loginsBefore + 1);
    // One code, from the secret, accepted at once.
    expect(sites.codesPosted(shape)).toBe(codesBefore + 1);
  });
});
