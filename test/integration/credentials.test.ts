import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentialStore } from "#shared/composition/credential-records.ts";
import { credentials } from "#shared/composition/credentials.ts";
import { secretBox } from "#shared/composition/secrets.ts";
import { credentialsCore } from "#shared/domain/credentials.ts";
import { BadRequestError, ConflictError, NotFoundError } from "#shared/domain/errors.ts";
import { totpCode } from "#shared/secrets/totp.ts";
import { servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;
let creds: ReturnType<typeof credentials>;

beforeAll(async () => {
  core = await servicesOnFreshTable();
  creds = credentials(core.config);
});

afterAll(async () => {
  await core?.stack.stop();
});

async function itemsOfOrg(org: string) {
  const scan = await core.db.send(new ScanCommand({ TableName: core.tableName, ConsistentRead: true }));
  return (scan.Items ?? []).filter((item) => String(item.pk).includes(`#${org}#`));
}

const password = "Corr3ct-Horse-Battery!";
const username = "alice.secret-login@example.com";
const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

const aCredential = (name: string, overrides: Partial<Parameters<typeof creds.create>[1]> = {}) => ({
  name,
  domain: "example.com",
  values: { username, password },
  ...overrides,
});

describe("credentials on DynamoDB Local", () => {
  it("creates, reads by id and by name, and shows value keys and flags but never a value", async () => {
    const org = uniqueOrg();

    const created = await creds.create(org, aCredential("work-login", { domain: "Example.COM", sso_provider: "Google" }));
    const byId = await creds.get(org, created.id);
    const byName = await creds.get(org, "work-login");

    expect(created.id).toMatch(/^cr_[0-9a-z]{20}$/);
    expect(created).toEqual({
      id: created.id,
      name: "work-login",
      domain: "example.com",
      created_at: created.created_at,
      updated_at: created.created_at,
      sso_provider: "google",
      has_values: true,
      has_totp_secret: false,
      value_keys: ["password", "username"],
    });
    expect(byId).toEqual(created);
    expect(byName).toEqual(created);
    expect(JSON.stringify(created)).not.toContain(password);
  });

  it("updates: rename, values merged after removals, TOTP secret set and cleared, SSO provider cleared", async () => {
    const org = uniqueOrg();
    const created = await creds.create(org, aCredential("before", { values: { username, password, pin: "1234" }, sso_provider: "github" }));

    const renamed = await creds.update(org, "before", { name: "after", values: { password: "new-password", otp_label: "phone" }, remove_value_keys: ["pin", "password"] });
    const withTotp = await creds.update(org, created.id, { totp_secret: "jbsw y3dp ehpk 3pxp" });
    const cleared = await creds.update(org, "after", { totp_secret: "", sso_provider: null });
    const unchanged = await creds.update(org, "after", {});

    expect(renamed).toMatchObject({ id: created.id, name: "after", value_keys: ["otp_label", "password", "username"], sso_provider: "github" });
    expect(withTotp).toMatchObject({ has_totp_secret: true, totp_code: expect.stringMatching(/^\d{6}$/), totp_code_expires_at: expect.any(String) });
    expect(cleared).toMatchObject({ has_totp_secret: false, sso_provider: null });
    expect(cleared).not.toHaveProperty("totp_code");
    expect(unchanged).toEqual(cleared);
    expect((await creds.forLogin(org, "after"))?.values).toEqual({ username, password: "new-password", otp_label: "phone" });
    await expect(creds.get(org, "before")).rejects.toBeInstanceOf(NotFoundError);
    expect(await creds.create(org, aCredential("before"))).toMatchObject({ name: "before" });
  });

  it("deletes the credential and its name, so the name is free again", async () => {
    const org = uniqueOrg();
    const created = await creds.create(org, aCredential("short-lived"));

    await creds.remove(org, "short-lived");

    await expect(creds.get(org, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(creds.remove(org, created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await itemsOfOrg(org)).toEqual([]);
    expect((await creds.create(org, aCredential("short-lived"))).id).not.toBe(created.id);
  });

  it("refuses a duplicate name on create and on rename, naming the holder", async () => {
    const org = uniqueOrg();
    const first = await creds.create(org, aCredential("taken"));
    const other = await creds.create(org, aCredential("other"));

    await expect(creds.create(org, aCredential("taken"))).rejects.toMatchObject({ code: "conflict", extra: { existing_id: first.id } });
    await expect(creds.update(org, other.id, { name: "taken" })).rejects.toMatchObject({ code: "conflict", extra: { existing_id: first.id } });
    expect(await creds.get(org, "other")).toEqual(other);
  });

  it("keeps every org's credentials invisible to the others", async () => {
    const owner = uniqueOrg();
    const stranger = uniqueOrg();
    const created = await creds.create(owner, aCredential("mine"));

    await expect(creds.get(stranger, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(creds.get(stranger, "mine")).rejects.toBeInstanceOf(NotFoundError);
    await expect(creds.update(stranger, created.id, { values: { password: "x" } })).rejects.toBeInstanceOf(NotFoundError);
    expect(await creds.forLogin(stranger, "mine")).toBeUndefined();
    expect((await creds.list(stranger, { limit: 100, offset: 0 })).items).toEqual([]);
  });

  it("filters by domain (normalised) and by a case-insensitive substring of name or domain, or an exact id", async () => {
    const org = uniqueOrg();
    const netflix = await creds.create(org, aCredential("Netflix-Main", { domain: "netflix.com" }));
    const github = await creds.create(org, aCredential("gh", { domain: "github.com" }));
    const netflixKids = await creds.create(org, aCredential("kids", { domain: "netflix.com" }));
    const ids = (page: { items: Array<{ id: string }> }) => page.items.map((item) => item.id);
    const list = (filters: { domain?: string; query?: string }) => creds.list(org, { limit: 100, offset: 0, ...filters });

    expect(ids(await list({}))).toEqual([netflixKids.id, github.id, netflix.id]);
    expect(ids(await list({ domain: "NETFLIX.com" }))).toEqual([netflixKids.id, netflix.id]);
    expect(ids(await list({ query: "netflix-m" }))).toEqual([netflix.id]);
    expect(ids(await list({ query: "HUB" }))).toEqual([github.id]);
    expect(ids(await list({ domain: "netflix.com", query: "kid" }))).toEqual([netflixKids.id]);
    expect(ids(await list({ query: github.id }))).toEqual([github.id]);
    expect(ids(await list({ domain: "nothing.com" }))).toEqual([]);
    expect((await list({})).items[0]).not.toHaveProperty("value_keys");
    expect((await list({})).items[0]).toMatchObject({ has_values: true, has_totp_secret: false });
    await expect(list({ domain: "https://netflix.com" })).rejects.toBeInstanceOf(BadRequestError);
  });

  it("pages newest first with every credential seen once, under a domain filter too", async () => {
    const org = uniqueOrg();
    const created: string[] = [];
    for (let index = 0; index < 12; index++) {
      created.push((await creds.create(org, aCredential(`login-${index}`, { domain: index % 2 ? "odd.com" : "even.com" }))).id);
    }

    const pages = [];
    for (let offset = 0; ; offset += 5) {
      const page = await creds.list(org, { limit: 5, offset });
      pages.push(page);
      if (!page.hasMore) break;
    }
    const evenPage = await creds.list(org, { domain: "even.com", limit: 4, offset: 4 });

    expect(pages.map((page) => [page.items.length, page.hasMore])).toEqual([
      [5, true],
      [5, true],
      [2, false],
    ]);
    expect(pages.flatMap((page) => page.items.map((item) => item.id))).toEqual([...created].reverse());
    expect(evenPage.items.map((item) => item.id)).toEqual([created[2], created[0]]);
    expect(evenPage.hasMore).toBe(false);
  });

  it("makes exactly one of 20 concurrent creates of one name", async () => {
    const org = uniqueOrg();

    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, index) => creds.create(org, aCredential("contested", { values: { password: `p${index}` } }))));

    const winners = outcomes.filter((outcome) => outcome.status === "fulfilled");
    const losers = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(winners).toHaveLength(1);
    const winnerId = (winners[0] as PromiseFulfilledResult<{ id: string }>).value.id;
    for (const loser of losers) {
      expect(loser.reason).toBeInstanceOf(ConflictError);
      expect(loser.reason).toMatchObject({ extra: { existing_id: winnerId } });
    }
    const items = await itemsOfOrg(org);
    expect(items.map((item) => item.entity).sort()).toEqual(["credential", "credential_name"]);
    expect(items.find((item) => item.entity === "credential_name")?.credential_id).toBe(winnerId);
  });

  it("stores values and the TOTP secret only as ciphertext", async () => {
    const org = uniqueOrg();
    const created = await creds.create(org, aCredential("at-rest", { totp_secret: totpSecret }));
    await creds.update(org, created.id, { values: { recovery: "recovery-code-7781" } });
    await creds.saveFromLogin(org, { name: "at-rest", domain: "example.com", values: { password } });

    const items = await itemsOfOrg(org);
    const raw = JSON.stringify(items);
    const credentialItem = items.find((item) => item.entity === "credential")!;

    for (const secret of [password, username, "recovery-code-7781", totpSecret, totpSecret.toLowerCase(), "JBSWY3DP"]) {
      expect(raw).not.toContain(secret);
    }
    expect(credentialItem.sealed_values).toMatch(/^v1\.local\./);
    expect(credentialItem.sealed_totp_secret).toMatch(/^v1\.local\./);
    expect(credentialItem.value_keys).toEqual(["password", "recovery", "username"]);
    expect(await creds.forLogin(org, "at-rest")).toEqual({
      id: created.id,
      name: "at-rest",
      domain: "example.com",
      values: { username, password, recovery: "recovery-code-7781" },
      totpSecret,
      ssoProvider: null,
    });
  });

  it("does not open values under another credential's context", async () => {
    const org = uniqueOrg();
    const victim = await creds.create(org, aCredential("victim"));
    const thief = await creds.create(org, aCredential("thief", { values: { password: "mine" } }));
    const store = credentialStore(core.config);
    const stolen = (await store.get(org, victim.id))!.sealed_values;
    await store.update(org, thief.id, async (current) => ({ ...current, sealed_values: stolen }));

    await expect(creds.forLogin(org, "thief")).rejects.toThrow(/could not be opened/);
  });

  it("answers the current TOTP code of the stored secret, and refuses a bad secret or a missing one", async () => {
    const org = uniqueOrg();
    const at = new Date("2026-11-22T10:30:10.000Z");
    const fixedClock = credentialsCore({ credentials: credentialStore(core.config), connections: core.connectionStore, box: secretBox(core.config), policy: { allowPrivateTargets: true }, now: () => at });
    const created = await fixedClock.create(org, aCredential("with-totp", { totp_secret: totpSecret }));
    const before = await itemsOfOrg(org);

    const answer = await fixedClock.totpCode(org, "with-totp");

    expect(answer).toEqual({ code: totpCode(totpSecret, at), expires_at: "2026-11-22T10:30:30.000Z" });
    expect(created).toMatchObject({ totp_code: answer.code, totp_code_expires_at: answer.expires_at });
    for (const bad of ["not base32!", "ABCDEFGH", "JBSWY3DPEHPK3PX1"]) {
      const attempt = fixedClock.update(org, "with-totp", { totp_secret: bad });
      await expect(attempt).rejects.toBeInstanceOf(BadRequestError);
      await expect(attempt).rejects.not.toThrow(bad);
    }
    await expect(fixedClock.create(org, aCredential("bad-totp", { totp_secret: "1111" }))).rejects.toBeInstanceOf(BadRequestError);
    expect(await itemsOfOrg(org)).toEqual(before);
    await fixedClock.create(org, aCredential("no-totp"));
    await expect(fixedClock.totpCode(org, "no-totp")).rejects.toMatchObject({ code: "bad_request", message: expect.stringContaining("no totp_secret") });
  });
});

describe("credentials for login flows", () => {
  it("creates the credential a login saves, then merges later saves into it", async () => {
    const org = uniqueOrg();

    const first = await creds.saveFromLogin(org, { name: "from-login", domain: "site.com", values: { identifier: username, password: "old" } });
    const second = await creds.saveFromLogin(org, { name: "from-login", domain: "site.com", values: { password } });

    expect(second).toEqual(first);
    expect(first?.id).toMatch(/^cr_/);
    expect(await creds.forLogin(org, "from-login")).toEqual({
      id: first?.id,
      name: "from-login",
      domain: "site.com",
      values: { identifier: username, password },
      totpSecret: null,
      ssoProvider: null,
    });
    expect(await creds.forLogin(org, "nobody")).toBeUndefined();
  });

  it("never merges a login's values into a credential of that name saved for another domain", async () => {
    const org = uniqueOrg();
    await creds.create(org, { name: "bank", domain: "bank.example", values: { identifier: username, password } });
    const before = await creds.get(org, "bank");

    const saved = await creds.saveFromLogin(org, { name: "bank", domain: "evil.example", values: { password: "typed on evil.example" } });

    expect(saved).toBeUndefined();
    expect(await creds.get(org, "bank")).toEqual(before);
    expect((await creds.forLogin(org, "bank"))?.values).toEqual({ identifier: username, password });
  });

  it("keeps every value of 12 concurrent saves to one new name, in one credential", async () => {
    const org = uniqueOrg();

    const saved = await Promise.all(
      Array.from({ length: 12 }, (_, index) => creds.saveFromLogin(org, { name: "busy", domain: "site.com", values: { [`field${index}`]: `value${index}` } })),
    );

    expect(new Set(saved.map((ref) => ref?.id)).size).toBe(1);
    const login = await creds.forLogin(org, "busy");
    expect(login?.values).toEqual(Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`field${index}`, `value${index}`])));
    expect((await itemsOfOrg(org)).filter((item) => item.entity === "credential")).toHaveLength(1);
  });
});
