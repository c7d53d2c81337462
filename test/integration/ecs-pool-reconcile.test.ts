import { RunTaskCommand } from "@aws-sdk/client-ecs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poolsOnDynamoDbLocal } from "../support/dynamo-pools.ts";
import { fakeEcs, fakeEcsBrowsers, standInRouter } from "../support/fake-ecs.ts";

let router: Awaited<ReturnType<typeof standInRouter>>;

beforeAll(async () => {
  router = await standInRouter();
});
afterAll(async () => {
  await router?.stop();
});

describe("a pool on ECS tasks", () => {
  it("forgets a task that stopped by itself, as a crashed local browser, and launches a replacement", async () => {
    const fake = fakeEcs();
    let clock = new Date("2026-11-23T10:00:00.000Z");
    const { store, core, filler } = await poolsOnDynamoDbLocal(fakeEcsBrowsers(fake.ecs, router.url), () => clock);

    const pool = await core.create("org-ecs", { size: 2, fill_rate_per_minute: 6000 });
    await filler.tick();
    const [crashed, kept] = [...fake.tasks.keys()] as [string, string];
    fake.stopOnItsOwn(crashed);
    clock = new Date(clock.getTime() + 1000);
    await filler.tick();

    const refs = (await store.read("org-ecs", pool.id))?.browsers.map((record) => record.ref) ?? [];
    expect(refs).toHaveLength(2);
    expect(refs).toContain(kept);
    expect(refs).not.toContain(crashed);
    expect(fake.mock.commandCalls(RunTaskCommand)).toHaveLength(3);
    expect((await core.get("org-ecs", pool.id)).available_count).toBe(2);
  });
});
