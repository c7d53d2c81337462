import type Kernel from "@onkernel/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ssoShapes, startSsoShapesSite, type SsoShape, type SsoShapesSite } from "../sites/sso-shapes-site.ts";
import { driveLogin, type Connection } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

/**
 * "Sign in with the identity provider" drawn as something only the page's script acts on (an `<a>`
 * without href, a `role=button` div, an icon button named by its aria-label): the flow offers it,
 * presses it in a browser, signs in at the provider; `save_credentials` keeps the provider's
 * credential under the provider's domain with its `sso_provider`, and a re-auth follows the same
 * provider, typing that credential on the provider's page only.
 */
let site: SsoShapesSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  site = await startSsoShapesSite();
  // A flow waits 30 s for input; a 300 s health-check interval runs in 15 s.
  stack = await startTestStack({ timeScale: 0.05 });
  client = officialClient(stack);
});

const created: string[] = [];

afterEach(async () => {
  await Promise.all(created.splice(0).map((id) => client.auth.connections.delete(id)));
});

afterAll(async () => {
  await stack?.stop();
  await site?.stop();
});

async function connectionFor(shape: SsoShape, extra: Record<string, unknown> = {}): Promise<Connection> {
  const made = await client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: `sso-${shape}`,
    login_url: site.loginUrl(shape),
    allowed_domains: ["localhost"],
    health_checks: false,
    ...extra,
  });
  created.push(made.id);
  return made;
}

/** The person: picks the identity provider where it is offered, and signs in at the provider. */
function person(connection: Connection) {
  const provider = (connection.choices ?? []).find((choice) => choice.type === "sso_provider");
  if (provider) return { selected_choice_id: provider.id };
  const values: Record<string, string> = {};
  for (const field of connection.fields ?? []) {
    if (field.type === "identifier") values[field.id] = site.user.email;
    else if (field.type === "password") values[field.id] = site.user.password;
  }
  return { field_values: values };
}

describe("an identity provider's button that only the page's script acts on", () => {
  it.each(ssoShapes)("%s: is offered, pressed, and the login through the provider succeeds", async (shape) => {
    const made = await connectionFor(shape);
    const before = site.passwordsPosted();

    const states = await driveLogin(client, made.id, person);

    expect(states[0]?.pending_sso_buttons).toEqual([expect.objectContaining({ provider: "testidp" })]);
    expect(states.at(-1)).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", sso_provider: "testidp" });
    expect(site.logins(shape)).toBe(1);
    expect(site.passwordsPosted()).toEqual({ app: before.app, provider: before.provider + 1 });
  });

  it("saves the provider's credential under the provider's domain with sso_provider, and a re-auth signs in through the provider with it", async () => {
    const made = await connectionFor("anchor", { health_checks: true, health_check_interval: 300, profile_name: "sso-anchor-reauth" });
    const ended = (await driveLogin(client, made.id, person)).at(-1) as Connection;

    expect(ended).toMatchObject({ flow_status: "SUCCESS", sso_provider: "testidp", can_reauth: true, credential: { name: "sso-anchor-reauth-localhost" } });
    expect(await client.credentials.retrieve("sso-anchor-reauth-localhost")).toMatchObject({ domain: "localhost", sso_provider: "testidp", value_keys: ["identifier", "password"] });
    const before = site.passwordsPosted();
    const logins = site.logins("anchor");

    site.expireSessions("anchor");

    const back = await eventually(async () => {
      const events = (await client.auth.connections.timeline(made.id, { type: "reauth", limit: 100 })).getPaginatedItems();
      return events.length > 0 ? client.auth.connections.retrieve(made.id) : undefined;
    }, "the re-auth through TestIdP", 60);
    expect(back).toMatchObject({ status: "AUTHENTICATED", flow_type: "REAUTH", flow_status: "SUCCESS", sso_provider: "testidp" });
    expect(site.logins("anchor")).toBe(logins + 1);
    // The provider's credential went to the provider once, and nothing to the app's own password form.
    expect(site.passwordsPosted()).toEqual({ app: before.app, provider: before.provider + 1 });
  });
});
