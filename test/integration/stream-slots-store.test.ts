import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamSlotStore, tableClient } from "#shared/composition/table.ts";
import { keys } from "#shared/store/keys.ts";
import { servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;

beforeAll(async () => {
  core = await servicesOnFreshTable();
});

afterAll(async () => {
  await core?.stack.stop();
});

const slot = (holder: string, until: number) => ({ holder, until });

describe("the open event streams of a connection in DynamoDB", () => {
  it("writes the slots only at the version read, so of two streams that read together one wins", async () => {
    const org = uniqueOrg();
    const store = streamSlotStore(core.config);
    const before = await store.read(org, "ac_1");

    const first = await store.replace(org, "ac_1", { a: slot("api-key", 1000) }, before.version);
    const second = await store.replace(org, "ac_1", { b: slot("api-key", 1000) }, before.version);
    const after = await store.read(org, "ac_1");
    const third = await store.replace(org, "ac_1", { ...after.slots, c: slot("token:t", 2000) }, after.version);

    expect(before).toEqual({ slots: {}, version: 0 });
    expect([first, second, third]).toEqual([true, false, true]);
    expect(await store.read(org, "ac_1")).toEqual({ slots: { a: slot("api-key", 1000), c: slot("token:t", 2000) }, version: 2 });
  });

  it("renews and releases a slot, each a write that a stale replace then loses; a slot dropped is not brought back", async () => {
    const org = uniqueOrg();
    const store = streamSlotStore(core.config);
    await store.replace(org, "ac_1", { a: slot("api-key", 1000), b: slot("api-key", 1000) }, 0);
    const stale = await store.read(org, "ac_1");

    const renewed = await store.renew(org, "ac_1", "a", 5000);
    await store.release(org, "ac_1", "b");
    const renewedGone = await store.renew(org, "ac_1", "b", 5000);
    await store.release(org, "ac_1", "b");
    const staleWrite = await store.replace(org, "ac_1", stale.slots, stale.version);

    expect(renewed).toBe(true);
    expect(renewedGone).toBe(false);
    expect(staleWrite).toBe(false);
    expect(await store.read(org, "ac_1")).toEqual({ slots: { a: slot("api-key", 5000) }, version: 3 });
  });

  it("makes no item when a stream releases or renews a slot on a connection that has none", async () => {
    const org = uniqueOrg();
    const store = streamSlotStore(core.config);

    await store.release(org, "ac_1", "a");
    const renewed = await store.renew(org, "ac_1", "a", 5000);

    expect(renewed).toBe(false);
    const { Item } = await tableClient(core.config).send(new GetCommand({ TableName: core.config.TABLE_NAME, Key: keys.streamSlots(org, "ac_1") }));
    expect(Item).toBeUndefined();
  });
});
