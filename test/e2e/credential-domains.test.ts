import type Kernel from "@onkernel/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startLoginSite, type LoginSite } from "../sites/login-site.ts";
import { logIn, type Connection } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

/**
 * A stored credential belongs to its site, through the API: linking one of another site is refused,
 * a login saves what was typed only into the typed-on site's credential, and a re-auth types a
 * credential only on its own site's pages. The login site answers on 127.0.0.1 and its identity
 * provider, TestSSO, on localhost: two sites, both on loopback.
 */
let site: LoginSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  site = await startLoginSite();
  // 300 s health-check intervals run in 3 s.
  stack = await startTestStack({ timeScale: 0.01 });
  client = officialClient(stack);
});

const created: string[] = [];

// The site is shared: a connection left running would re-auth in the next test.
afterEach(async () => {
  await Promise.all(created.splice(0).map((id) => client.auth.connections.delete(id)));
});

afterAll(async () => {
  await stack?.stop();
  await site?.stop();
});

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;

async function storedCredential(domain: string): Promise<string> {
  const name = unique(`for-${domain}`);
  await client.credentials.create({ name, domain, values: { identifier: site.user.email, password: site.user.password } });
  return name;
}

async function connection(shape: "plain" | "sso", settings: Record<string, unknown>): Promise<Connection> {
  const made = await client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: unique(shape),
    login_url: `${site.url}/${shape}/login`,
    health_check_interval: 300,
    ...settings,
  });
  created.push(made.id);
  return made;
}

/** The connection once its timeline holds a re-auth that `matches`. */
function reauthThat(id: string, matches: (event: { status: string; error_code?: string | null }) => boolean, what: string) {
  return eventually(async () => {
    const events = (await client.auth.connections.timeline(id, { type: "reauth", limit: 100 })).getPaginatedItems();
    return events.some(matches) ? client.auth.connections.retrieve(id) : undefined;
  }, what, 40);
}

/** The error body of a call the API refused. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; message: string }> {
  const error = (await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )) as { status?: number; error?: { message?: string } } | undefined;
  return { status: error?.status ?? 0, message: error?.error?.message ?? "" };
}

describe("linking a credential", () => {
  it("refuses with 400, naming both domains, a credential of another site, on create and on update, and writes nothing", async () => {
    const elsewhere = await storedCredential("bank.example");
    const profile = unique("linking");

    const onCreate = await refusal(client.auth.connections.create({ domain: "127.0.0.1", profile_name: profile, credential: { name: elsewhere } }));

    expect(onCreate.status).toBe(400);
    expect(onCreate.message).toContain("bank.example");
    expect(onCreate.message).toContain("127.0.0.1");
    expect((await client.auth.connections.list({ profile_name: profile })).getPaginatedItems()).toEqual([]);

    const made = await connection("plain", { health_checks: false });
    const onUpdate = await refusal(client.auth.connections.update(made.id, { credential: { name: elsewhere } }));

    expect(onUpdate.status).toBe(400);
    expect(onUpdate.message).toMatch(/bank\.example.*127\.0\.0\.1/);
    expect((await client.auth.connections.retrieve(made.id)).credential).toBeNull();
  });

  it("takes a credential of the connection's site, of an allowed_domains entry, or of a known identity provider", async () => {
    const own = await storedCredential("127.0.0.1");
    const allowed = await storedCredential("localhost");
    const provider = await storedCredential("accounts.google.com");

    const made = await connection("plain", { health_checks: false, credential: { name: own } });
    const withAllowed = await client.auth.connections.update(made.id, { allowed_domains: ["localhost"], credential: { name: allowed } });
    const withProvider = await client.auth.connections.update(made.id, { credential: { name: provider } });

    expect(made.credential?.name).toBe(own);
    expect(withAllowed.credential?.name).toBe(allowed);
    expect(withProvider.credential?.name).toBe(provider);
  });
});

describe("save_credentials", () => {
  it("saves the values typed on the site into that site's credential and leaves the linked one of another domain untouched", async () => {
    const other = await storedCredential("localhost");
    const before = await client.credentials.retrieve(other);
    const made = await connection("plain", { health_checks: false, allowed_domains: ["localhost"], credential: { name: other } });

    const ended = await logIn(client, site, "plain", made.id, { password: site.user.password });

    expect(ended).toMatchObject({ flow_status: "SUCCESS", credential: { name: `${made.profile_name}-127.0.0.1` } });
    expect(await client.credentials.retrieve(other)).toEqual(before);
    const saved = await client.credentials.retrieve(`${made.profile_name}-127.0.0.1`);
    expect(saved).toMatchObject({ domain: "127.0.0.1", value_keys: ["identifier", "password"] });
  });
});

describe("re-auth types a stored credential only on its own site", () => {
  it("refuses to type a credential of another site into the connection's login page, and stops", async () => {
    const other = await storedCredential("localhost");
    // Linked through allowed_domains; the person's values are not saved, so the link stays.
    const made = await connection("plain", { allowed_domains: ["localhost"], credential: { name: other }, save_credentials: false });
    expect(await logIn(client, site, "plain", made.id)).toMatchObject({ flow_status: "SUCCESS", can_reauth: true });
    const posted = site.passwordsPosted();

    site.expireSessions("plain");

    const refused = await reauthThat(made.id, (event) => event.error_code === "credential_domain_mismatch", "the refused re-auth");
    expect(refused).toMatchObject({ status: "NEEDS_AUTH", flow_type: "REAUTH", flow_status: "FAILED", can_reauth: false });
    expect(refused.error_message).toBe("the stored credential saved for localhost is not typed on or sent to 127.0.0.1, which is outside that domain");
    expect(site.passwordsPosted()).toEqual(posted);
  });

  it("signs in through the identity provider with the provider's credential, typed on the provider's page only", async () => {
    const provider = await storedCredential("localhost");
    const made = await connection("sso", { allowed_domains: ["localhost"], credential: { name: provider } });
    const ended = await logIn(client, site, "sso", made.id, { sso: true });
    expect(ended).toMatchObject({ flow_status: "SUCCESS", sso_provider: "testsso", can_reauth: true, credential: { name: provider } });
    const posted = site.passwordsPosted();

    site.expireSessions("sso");

    const back = await reauthThat(made.id, (event) => event.status === "SUCCESS", "the re-auth through TestSSO");
    expect(back).toMatchObject({ status: "AUTHENTICATED", flow_type: "REAUTH", flow_status: "SUCCESS" });
    expect(site.passwordsPosted()).toEqual({ site: posted.site, sso: posted.sso + 1 });
  });
});
