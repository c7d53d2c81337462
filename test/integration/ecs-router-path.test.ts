import type { AddressInfo } from "node:net";
import { RunTaskCommand, StopTaskCommand, type RunTaskCommandInput, type StopTaskCommandInput } from "@aws-sdk/client-ecs";
import { chromium, type Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { taskRouter } from "#shared/browsers/router/task-router.ts";
import { log } from "#shared/log.ts";
import { startBrowserTaskEntry, type BrowserTaskEntry } from "../support/browser-task-entry.ts";
import { poolsOnDynamoDbLocal } from "../support/dynamo-pools.ts";
import { fakeEcs, fakeEcsBrowsers } from "../support/fake-ecs.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";
import { startTestSite, upgradeStatus } from "../support/pools.ts";
import { patientMs } from "../support/patience.ts";

const org = "org-ecs-router";

let executables: Awaited<ReturnType<typeof loginChromiumForTests>>;
let site: Awaited<ReturnType<typeof startTestSite>>;
let router: Awaited<ReturnType<typeof startRouter>>;
const clients: Browser[] = [];

/** The id that ends a task's ARN: how the router's paths name the task. */
const taskIdOf = (arn: string) => arn.slice(arn.lastIndexOf("/") + 1);

/**
 * ECS in memory, whose tasks really run: RunTask starts a browser-task entry with the settings the
 * launch put in the task's container overrides, and StopTask ends it. As in ECS, a task shows as
 * running before its entry serves.
 */
const fake = fakeEcs();
/** Every entry a RunTask started, by task id, whether it serves yet or not. */
const entries = new Map<string, Promise<BrowserTaskEntry>>();
/** What the router resolves: the origin of each task that runs and whose entry serves. */
const origins = new Map<string, string>();
let entryFailed!: (error: Error) => void;
/** Rejects when an entry does not start, so that a fill fails with the entry's reason and not at the provider's start timeout. */
const anEntryFailed = new Promise<never>((_, failed) => (entryFailed = failed));

fake.mock.on(RunTaskCommand).callsFake((input: RunTaskCommandInput) => {
  const answer = fake.runTask(input);
  const arn = answer.tasks[0]?.taskArn as string;
  const environment = Object.fromEntries(
    (input.overrides?.containerOverrides ?? []).flatMap((container) => container.environment ?? []).map(({ name, value }) => [name as string, value as string]),
  );
  const entry = startBrowserTaskEntry({ chromium: executables.executablePath, environment });
  entries.set(taskIdOf(arn), entry);
  entry.then(
    ({ origin }) => {
      if (fake.tasks.get(arn)?.desiredStatus === "RUNNING") origins.set(taskIdOf(arn), origin);
    },
    entryFailed,
  );
  return answer;
});

fake.mock.on(StopTaskCommand).callsFake(async (input: StopTaskCommandInput) => {
  const answer = fake.stopTask(input);
  const taskId = taskIdOf(input.task as string);
  origins.delete(taskId);
  await (await entries.get(taskId))?.dispose();
  return answer;
});

/** The router as its own entry runs it, on 127.0.0.1, resolving the tasks of the fake ECS. */
async function startRouter() {
  const shutdown = new AbortController();
  const server = taskRouter({ resolveTask: async (taskId) => origins.get(taskId), signal: shutdown.signal });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop() {
      // The relayed connections would otherwise keep the server open.
      shutdown.abort();
      return new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}

beforeAll(async () => {
  executables = await loginChromiumForTests();
  site = await startTestSite("<html><head><title>through the router to a task</title></head><body>ok</body></html>");
  router = await startRouter();
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

afterAll(async () => {
  await Promise.allSettled([...entries.values()].map(async (entry) => (await entry).dispose()));
  await router?.stop();
  await site?.stop();
  await executables?.dispose();
});

async function connect(cdpWsUrl: string): Promise<Browser> {
  const client = await chromium.connectOverCDP(cdpWsUrl);
  clients.push(client);
  return client;
}

const tokenOf = (cdpWsUrl: string) => new URL(cdpWsUrl).searchParams.get("token") as string;

describe("a pooled browser on ECS, reached through the router", () => {
  it("fills, serves its lease's holder alone, is reset for the next and stops with its pool", async () => {
    const { core, filler } = await poolsOnDynamoDbLocal(fakeEcsBrowsers(fake.ecs, router.url));
    const logged = vi.spyOn(log, "info");
    const pool = await core.create(org, { size: 1, fill_rate_per_minute: 6000 });

    await Promise.race([filler.tick(), anEntryFailed]);

    expect((await core.get(org, pool.id)).available_count).toBe(1);
    const [arn, ...others] = [...fake.tasks.keys()];
    expect(others).toEqual([]);
    const taskId = taskIdOf(arn as string);
    expect(logged.mock.calls).toContainEqual(["router request", { method: "GET", path: `/browsers/${taskId}/health`, status: 200 }]);

    const first = await core.acquire(org, pool.id, 5);
    if (!first) throw new Error("no browser was acquired from the filled pool");
    const token = tokenOf(first.cdp_ws_url);
    const leased = new URL(first.cdp_ws_url);
    expect(`${leased.origin}${leased.pathname}`).toBe(`${router.url.replace(/^http/, "ws")}/browsers/${taskId}/devtools/browser/${first.session_id}`);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const holder = await connect(first.cdp_ws_url);
    const page = await (holder.contexts()[0] ?? (await holder.newContext())).newPage();
    await page.goto(site.url);
    expect(await page.title()).toBe("through the router to a task");

    const withoutToken = new URL(first.cdp_ws_url);
    withoutToken.search = "";
    const alteredToken = new URL(first.cdp_ws_url);
    alteredToken.searchParams.set("token", `${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`);
    expect(await upgradeStatus(withoutToken.href)).toBe(401);
    expect(await upgradeStatus(alteredToken.href)).toBe(401);

    await core.release(org, pool.id, first.session_id, true);

    await eventually(async () => (holder.isConnected() ? undefined : true), "the holder's client to be cut");
    expect(await upgradeStatus(first.cdp_ws_url)).toBe(401);

    const second = await core.acquire(org, pool.id, 5);
    if (!second) throw new Error("the released browser was not acquired again");
    expect(second.session_id).toBe(first.session_id);
    expect(tokenOf(second.cdp_ws_url)).not.toBe(token);
    const next = await connect(second.cdp_ws_url);
    expect(next.contexts().flatMap((context) => context.pages().map((each) => each.url()))).toEqual(["about:blank"]);
    await next.close();
    await core.release(org, pool.id, second.session_id, true);
    // Without the admin secret the task itself refuses: the router still finds it.
    expect((await fetch(`${router.url}/browsers/${taskId}/health`)).status).toBe(401);

    await core.remove(org, pool.id, false);

    expect(fake.mock.commandCalls(StopTaskCommand).map((call) => call.args[0].input.task)).toEqual([arn]);
    expect(await (await entries.get(taskId))?.exited).toBe(0);
    expect((await fetch(`${router.url}/browsers/${taskId}/health`)).status).toBe(404);
    expect(await upgradeStatus(second.cdp_ws_url)).toBe(404);
  }, patientMs(120_000));
});
