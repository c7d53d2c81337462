import { describe, expect, it } from "vitest";
import { apiKeysCore, hashApiKey, type ApiKeyRecord, type ApiKeyStore } from "#shared/domain/api-keys.ts";
import { BadRequestError } from "#shared/domain/errors.ts";

function memoryStore() {
  const records = new Map<string, ApiKeyRecord>();
  let lookups = 0;
  const store: ApiKeyStore = {
    async put(record) {
      records.set(record.key_hash, record);
    },
    async findOrg(keyHash) {
      lookups++;
      return records.get(keyHash)?.org;
    },
  };
  return { store, records, lookups: () => lookups };
}

describe("API keys", () => {
  it("stores only the hash of a minted key and resolves the key to its org", async () => {
    const memory = memoryStore();
    const keys = apiKeysCore({ store: memory.store, cacheSeconds: 0 });

    const key = await keys.mint("acme");

    expect([...memory.records.keys()]).toEqual([hashApiKey(key)]);
    expect(JSON.stringify([...memory.records.values()])).not.toContain(key);
    expect(await keys.authenticate(`Bearer ${key}`)).toBe("acme");
    expect(await keys.authenticate(`bearer ${key}`)).toBe("acme");
  });

  it.each([undefined, "", "Bearer", "Basic abc", "Bearer unknown-key", "Bearer a b"])("rejects %j", async (header) => {
    const keys = apiKeysCore({ store: memoryStore().store, cacheSeconds: 0 });
    await keys.mint("acme");

    expect(await keys.authenticate(header)).toBeUndefined();
  });

  it("trusts a verified key for the cache period only", async () => {
    const memory = memoryStore();
    let clock = 1_000_000;
    const keys = apiKeysCore({ store: memory.store, cacheSeconds: 60, now: () => clock });
    const key = await keys.mint("acme");

    await keys.authenticate(`Bearer ${key}`);
    await keys.authenticate(`Bearer ${key}`);
    const lookupsWhileCached = memory.lookups();
    clock += 61_000;
    await keys.authenticate(`Bearer ${key}`);

    expect(lookupsWhileCached).toBe(1);
    expect(memory.lookups()).toBe(2);
  });

  it("refuses an org name outside the naming rules", async () => {
    const keys = apiKeysCore({ store: memoryStore().store, cacheSeconds: 0 });

    await expect(keys.mint("no spaces allowed")).rejects.toBeInstanceOf(BadRequestError);
  });
});
