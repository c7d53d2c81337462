import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConflictError, NotFoundError } from "#shared/domain/errors.ts";
import { servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;

beforeAll(async () => {
  core = await servicesOnFreshTable();
});

afterAll(async () => {
  await core?.stack.stop();
});

async function itemsOfOrg(org: string) {
  const scan = await core.db.send(new ScanCommand({ TableName: core.tableName, ConsistentRead: true }));
  return (scan.Items ?? []).filter((item) => String(item.pk).includes(`#${org}#`));
}

const listAll = (org: string, filters: { profile_name?: string; domain?: string; query?: string } = {}) =>
  core.connections.list(org, { limit: 100, offset: 0, ...filters });

describe("connections on DynamoDB Local", () => {
  it("creates with the documented defaults and reads it back", async () => {
    const org = uniqueOrg();

    const created = await core.connections.create(org, { domain: "Example.COM", profile_name: "alice" });
    const fetched = await core.connections.get(org, created.id);

    expect(created.id).toMatch(/^ac_/);
    expect(fetched).toEqual(created);
    expect(created).toMatchObject({
      domain: "example.com",
      profile_name: "alice",
      status: "NEEDS_AUTH",
      health_checks: true,
      health_check_interval: 3600,
      auto_reauth: true,
      save_credentials: true,
      record_session: false,
      flow_status: null,
      discovered_fields: null,
      mfa_options: null,
    });
  });

  it("refuses a second connection for the same profile and domain, naming the existing one", async () => {
    const org = uniqueOrg();
    const first = await core.connections.create(org, { domain: "dup.com", profile_name: "p" });

    const second = core.connections.create(org, { domain: "dup.com", profile_name: "p" });

    await expect(second).rejects.toBeInstanceOf(ConflictError);
    await expect(second).rejects.toMatchObject({ extra: { existing_id: first.id } });
  });

  it("updates only the fields given and clears login_url with an empty string", async () => {
    const org = uniqueOrg();
    const created = await core.connections.create(org, {
      domain: "patch.com",
      profile_name: "p",
      login_url: "https://patch.com/login",
      allowed_domains: ["sso.patch.com"],
    });

    const changed = await core.connections.update(org, created.id, { health_check_interval: 600, record_session: true });
    const cleared = await core.connections.update(org, created.id, { login_url: "", allowed_domains: ["a.patch.com", "b.patch.com"] });

    expect(changed).toEqual({ ...created, health_check_interval: 600, record_session: true });
    expect(cleared).toEqual({ ...changed, login_url: null, allowed_domains: ["a.patch.com", "b.patch.com"] });
    expect(await core.connections.get(org, created.id)).toEqual(cleared);
  });

  it("deletes the record and its guard, so the pair can be connected again, and keeps the profile", async () => {
    const org = uniqueOrg();
    const created = await core.connections.create(org, { domain: "gone.com", profile_name: "keeper" });

    await core.connections.remove(org, created.id);

    await expect(core.connections.get(org, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(core.connections.remove(org, created.id)).rejects.toBeInstanceOf(NotFoundError);
    const items = await itemsOfOrg(org);
    expect(items.map((item) => item.entity).sort()).toEqual(["profile", "profile_name"]);
    expect(items.find((item) => item.entity === "profile")?.connection_count).toBe(0);
    const again = await core.connections.create(org, { domain: "gone.com", profile_name: "keeper" });
    expect(again.id).not.toBe(created.id);
  });

  it("keeps every org's connections invisible to the others", async () => {
    const owner = uniqueOrg();
    const stranger = uniqueOrg();
    const created = await core.connections.create(owner, { domain: "private.com", profile_name: "p" });

    await expect(core.connections.get(stranger, created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(core.connections.update(stranger, created.id, { auto_reauth: false })).rejects.toBeInstanceOf(NotFoundError);
    await expect(core.connections.remove(stranger, created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await listAll(stranger)).items).toEqual([]);
    expect((await core.connections.create(stranger, { domain: "private.com", profile_name: "p" })).id).not.toBe(created.id);
    expect(await core.connections.get(owner, created.id)).toMatchObject({ auto_reauth: true });
  });

  it("filters by profile name, domain, both, and a substring of id, domain or profile name", async () => {
    const org = uniqueOrg();
    const made: { id: string }[] = [];
    for (const [profile_name, domain] of [
      ["alice", "shop.com"],
      ["alice", "mail.com"],
      ["bob", "shop.com"],
      ["bob", "bank.org"],
    ] as const) {
      made.push(await core.connections.create(org, { profile_name, domain }));
    }
    const ids = (page: { items: { id: string }[] }) => page.items.map((item) => item.id).sort();
    const idsOf = (...indexes: number[]) => indexes.map((index) => made[index]!.id).sort();

    expect(ids(await listAll(org, { profile_name: "alice" }))).toEqual(idsOf(0, 1));
    expect(ids(await listAll(org, { domain: "shop.com" }))).toEqual(idsOf(0, 2));
    expect(ids(await listAll(org, { profile_name: "bob", domain: "shop.com" }))).toEqual(idsOf(2));
    expect(ids(await listAll(org, { profile_name: "carol" }))).toEqual([]);
    expect(ids(await listAll(org, { query: "BANK" }))).toEqual(idsOf(3));
    expect(ids(await listAll(org, { query: "lic" }))).toEqual(idsOf(0, 1));
    // The id's random half: its time half is shared by ids made within the same few milliseconds.
    expect(ids(await listAll(org, { query: made[2]!.id.slice(-10) }))).toEqual(idsOf(2));
    expect(ids(await listAll(org, { query: "shop", profile_name: "alice" }))).toEqual(idsOf(0));
  });

  it("pages newest first across several pages with every connection seen once", async () => {
    const org = uniqueOrg();
    const created: string[] = [];
    for (let index = 0; index < 23; index++) {
      created.push((await core.connections.create(org, { domain: `site${index}.com`, profile_name: "pager" })).id);
    }

    const pages = [];
    for (let offset = 0; ; offset += 5) {
      const page = await core.connections.list(org, { limit: 5, offset });
      pages.push(page);
      if (!page.hasMore) break;
    }

    expect(pages.map((page) => page.items.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.map((page) => page.hasMore)).toEqual([true, true, true, true, false]);
    expect(pages.flatMap((page) => page.items.map((item) => item.id))).toEqual([...created].reverse());
    const filtered = await core.connections.list(org, { limit: 4, offset: 20, query: "site" });
    expect(filtered.items.map((item) => item.id)).toEqual(created.slice(0, 3).reverse());
    expect(filtered.hasMore).toBe(false);
  });

  it("makes exactly one of 50 concurrent creates for one profile and domain", async () => {
    const org = uniqueOrg();

    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, () => core.connections.create(org, { domain: "race.com", profile_name: "racer" })),
    );

    const winners = outcomes.filter((outcome) => outcome.status === "fulfilled");
    const losers = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(winners).toHaveLength(1);
    expect(losers).toHaveLength(49);
    const winnerId = (winners[0] as PromiseFulfilledResult<{ id: string }>).value.id;
    for (const loser of losers) {
      expect(loser.reason).toBeInstanceOf(ConflictError);
      expect(loser.reason).toMatchObject({ extra: { existing_id: winnerId } });
    }
    const items = await itemsOfOrg(org);
    expect(items.filter((item) => item.entity === "connection")).toHaveLength(1);
    expect(items.filter((item) => item.entity === "profile")).toHaveLength(1);
    expect(items.find((item) => item.entity === "profile")?.connection_count).toBe(1);
  });

  it("creates one profile for 20 concurrent creates over 20 domains with a new profile name", async () => {
    const org = uniqueOrg();

    const created = await Promise.all(
      Array.from({ length: 20 }, (_, index) => core.connections.create(org, { domain: `d${index}.com`, profile_name: "fresh" })),
    );

    const items = await itemsOfOrg(org);
    const connections = items.filter((item) => item.entity === "connection");
    const profiles = items.filter((item) => item.entity === "profile");
    expect(connections).toHaveLength(20);
    expect(profiles).toHaveLength(1);
    expect(new Set(connections.map((item) => item.profile_id))).toEqual(new Set([profiles[0]!.id]));
    expect(profiles[0]!.connection_count).toBe(20);
    expect(new Set(created.map((connection) => connection.domain)).size).toBe(20);
  });
});
