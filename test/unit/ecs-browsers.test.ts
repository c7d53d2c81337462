import { DescribeTasksCommand, InvalidParameterException, ListTasksCommand, RunTaskCommand, StopTaskCommand, type RunTaskCommandInput } from "@aws-sdk/client-ecs";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ecsBrowsers, type EcsBrowsersOptions, poolTaskStartedBy, routedDevtoolsUrl, routedTaskOrigin } from "#shared/browsers/ecs-tasks.ts";
import { sha256Hex } from "#shared/browsers/task/digest.ts";
import { log } from "#shared/log.ts";
import { fakeEcs, hmacAdminSecrets, standInRouter } from "../support/fake-ecs.ts";
import { patientMs } from "../support/patience.ts";

const adminSecret = hmacAdminSecrets("a key only the pool functions hold, long enough");
let router: Awaited<ReturnType<typeof standInRouter>>;

beforeAll(async () => {
  router = await standInRouter();
});
afterAll(async () => {
  await router?.stop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

function providerOn(cluster = "browsers", settings: Partial<EcsBrowsersOptions> = {}) {
  const fake = fakeEcs();
  const browsers = ecsBrowsers({
    ecs: fake.ecs,
    cluster,
    taskDefinition: "acs-browser:3",
    subnets: ["subnet-a", "subnet-b"],
    securityGroups: ["sg-browser"],
    assignPublicIp: false,
    containerName: "browser",
    adminSecret,
    routerUrl: router.url,
    ...settings,
  });
  return { fake, browsers };
}

function runTaskInput(fake: ReturnType<typeof fakeEcs>) {
  const [run] = fake.mock.commandCalls(RunTaskCommand);
  if (!run) throw new Error("no RunTask was sent");
  return run.args[0].input;
}

describe("the ECS browser provider", () => {
  it("launches a Fargate task with the pool's settings and answers its private address once it runs", async () => {
    const { fake, browsers } = providerOn();
    const launched = await browsers.launch({ sessionId: "bs_one", startUrl: "https://example.test/start" });

    const input = runTaskInput(fake);
    expect(input).toMatchObject({
      cluster: "browsers",
      taskDefinition: "acs-browser:3",
      launchType: "FARGATE",
      count: 1,
      startedBy: poolTaskStartedBy,
      networkConfiguration: { awsvpcConfiguration: { subnets: ["subnet-a", "subnet-b"], securityGroups: ["sg-browser"], assignPublicIp: "DISABLED" } },
      tags: [{ key: "acs:session-id", value: "bs_one" }],
    });
    expect(input.overrides?.containerOverrides).toEqual([
      {
        name: "browser",
        environment: expect.arrayContaining([
          { name: "BROWSER_TASK_DEVTOOLS_ID", value: "bs_one" },
          { name: "BROWSER_TASK_ADMIN_SECRET_SHA256", value: sha256Hex(await adminSecret("bs_one")) },
          { name: "BROWSER_TASK_START_URL", value: "https://example.test/start" },
        ]),
      },
    ]);
    expect(fake.mock.commandCalls(DescribeTasksCommand, { cluster: "browsers", tasks: [launched.ref] }).length).toBeGreaterThan(0);
    const [arn] = [...fake.tasks.keys()];
    const taskId = arn?.split("/").at(-1);
    expect(launched).toEqual({ ref: arn, cdpWsUrl: `${router.url.replace("http:", "ws:")}/browsers/${taskId}/devtools/browser/bs_one`, headless: true });
  });

  it("reaches a task through the router by the id that ends its ARN, over wss:// behind an https router", () => {
    const arn = "arn:aws:ecs:eu-west-1:123456789012:task/acs-browsers/0123456789abcdef0123456789abcdef";
    expect(routedTaskOrigin("https://d111111abcdef8.cloudfront.net", arn)).toBe("https://d111111abcdef8.cloudfront.net/browsers/0123456789abcdef0123456789abcdef");
    expect(routedDevtoolsUrl("https://d111111abcdef8.cloudfront.net", arn, "bs_remote")).toBe(
      "wss://d111111abcdef8.cloudfront.net/browsers/0123456789abcdef0123456789abcdef/devtools/browser/bs_remote",
    );
  });

  it("passes no start URL when the pool has none", async () => {
    const { fake, browsers } = providerOn();
    await browsers.launch({ sessionId: "bs_blank", startUrl: null });
    const environment = runTaskInput(fake).overrides?.containerOverrides?.[0]?.environment ?? [];
    expect(environment.map((variable) => variable.name)).not.toContain("BROWSER_TASK_START_URL");
  });

  it("rejects with ECS's reason when RunTask starts nothing", async () => {
    const { fake, browsers } = providerOn();
    fake.mock.on(RunTaskCommand).resolves({ tasks: [], failures: [{ reason: "Capacity is unavailable at this time", detail: "FARGATE" }] });
    await expect(browsers.launch({ sessionId: "bs_full", startUrl: null })).rejects.toThrow("ECS did not start a browser task: Capacity is unavailable at this time: FARGATE");
  });

  it("stops a task that stopped before it ran, and rejects without quoting its overrides", async () => {
    const { fake, browsers } = providerOn();
    fake.mock.on(RunTaskCommand).callsFake((input: RunTaskCommandInput) => {
      const taskArn = "arn:aws:ecs:eu-west-1:123456789012:task/browsers/never-ran";
      const stoppedReason = "CannotPullContainerError: pull access denied";
      fake.tasks.set(taskArn, { taskArn, startedBy: poolTaskStartedBy, desiredStatus: "STOPPED", lastStatus: "STOPPED", stoppedReason, overrides: input.overrides });
      return { tasks: [fake.tasks.get(taskArn)] };
    });
    const failure = await browsers.launch({ sessionId: "bs_dies", startUrl: null }).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(String(failure)).toContain("CannotPullContainerError: pull access denied");
    expect(String(failure)).not.toContain(await adminSecret("bs_dies"));
    expect(fake.mock.commandCalls(StopTaskCommand, { task: "arn:aws:ecs:eu-west-1:123456789012:task/browsers/never-ran" })).toHaveLength(1);
  });

  it("resolves a launch only once the task's entry answers its health check with the admin secret", async () => {
    const { browsers } = providerOn();
    const before = router.calls.length;
    router.refuseHealth(2);

    await browsers.launch({ sessionId: "bs_warming", startUrl: null });

    const healthChecks = router.calls.slice(before).filter((call) => call.path === "/health");
    const authorization = `Bearer ${await adminSecret("bs_warming")}`;
    const task = router.calls.at(-1)?.task;
    expect(task).toMatch(/^[0-9]{32}$/);
    expect(healthChecks).toEqual(Array.from({ length: 3 }, () => ({ task, method: "GET", path: "/health", authorization, body: "" })),
    );
  });

  it("stops a running task whose entry never answers within the start timeout, and rejects", { timeout: patientMs(20_000) }, async () => {
    const silentRouter = await standInRouter();
    try {
      silentRouter.refuseHealth(Number.POSITIVE_INFINITY);
      // The smallest timeout the SDK's running waiter accepts.
      const { fake, browsers } = providerOn("browsers", { routerUrl: silentRouter.url, startTimeoutSeconds: 7 });

      await expect(browsers.launch({ sessionId: "bs_silent", startUrl: null })).rejects.toThrow("did not answer its health check within 7 s (HTTP 503)");

      const [arn] = [...fake.tasks.keys()];
      expect(fake.mock.commandCalls(StopTaskCommand, { cluster: "browsers", task: arn })).toHaveLength(1);
    } finally {
      await silentRouter.stop();
    }
  });

  it("gives up on a task that stopped while its entry was awaited, with ECS's reason, well before the start timeout", { timeout: patientMs(20_000) }, async () => {
    const vanishing = await standInRouter();
    try {
      vanishing.refuseHealth(Number.POSITIVE_INFINITY, 404);
      const { fake, browsers } = providerOn("browsers", { routerUrl: vanishing.url, startTimeoutSeconds: 600 });
      const launch = browsers.launch({ sessionId: "bs_exits", startUrl: null }).catch((error: Error) => error);
      await vi.waitFor(() => expect(vanishing.calls.some((call) => call.path === "/health")).toBe(true));
      fake.stopOnItsOwn([...fake.tasks.keys()][0] as string);

      expect(String(await launch)).toContain("stopped before it served (Essential container in task exited)");
    } finally {
      await vanishing.stop();
    }
  });

  it("rejects with the launch's own failure when stopping the task fails too, and notes the stop's failure", async () => {
    const { fake, browsers } = providerOn();
    const warn = vi.spyOn(log, "warn").mockImplementation(() => undefined);
    const taskArn = "arn:aws:ecs:eu-west-1:123456789012:task/browsers/never-ran";
    fake.mock.on(RunTaskCommand).callsFake((input: RunTaskCommandInput) => {
      fake.tasks.set(taskArn, { taskArn, startedBy: poolTaskStartedBy, desiredStatus: "STOPPED", lastStatus: "STOPPED", stoppedReason: "CannotPullContainerError", overrides: input.overrides });
      return { tasks: [fake.tasks.get(taskArn)] };
    });
    fake.mock.on(StopTaskCommand).rejects(new Error("Rate exceeded"));

    await expect(browsers.launch({ sessionId: "bs_unstoppable", startUrl: null })).rejects.toThrow("CannotPullContainerError");

    expect(warn).toHaveBeenCalledWith(expect.any(String), { taskArn, error: "Rate exceeded" });
  });

  it("destroys with StopTask, and treats a stopped or unknown task as done", async () => {
    const { fake, browsers } = providerOn();
    const { ref } = await browsers.launch({ sessionId: "bs_destroyed", startUrl: null });
    await browsers.destroy(ref);
    expect(fake.mock.commandCalls(StopTaskCommand, { cluster: "browsers", task: ref })).toHaveLength(1);
    await expect(browsers.destroy(ref)).resolves.toBeUndefined();
    await expect(browsers.destroy("arn:aws:ecs:eu-west-1:123456789012:task/browsers/unknown")).resolves.toBeUndefined();
  });

  it("still fails a StopTask refused for a task ECS knows", async () => {
    const { fake, browsers } = providerOn();
    const { ref } = await browsers.launch({ sessionId: "bs_refused", startUrl: null });
    fake.mock.on(StopTaskCommand).rejects(new InvalidParameterException({ message: "Invalid cluster", $metadata: {} }));
    await expect(browsers.destroy(ref)).rejects.toThrow("Invalid cluster");
  });

  it("lists its running tasks by startedBy across pages, without those that stopped by themselves", async () => {
    const { fake, browsers } = providerOn();
    const refs: string[] = [];
    for (const sessionId of ["bs_1", "bs_2", "bs_3", "bs_4", "bs_5"]) refs.push((await browsers.launch({ sessionId, startUrl: null })).ref);
    const crashed = refs[1] as string;
    fake.stopOnItsOwn(crashed);

    expect((await browsers.running()).sort()).toEqual(refs.filter((ref) => ref !== crashed).sort());
    const lists = fake.mock.commandCalls(ListTasksCommand);
    expect(lists.length).toBeGreaterThan(1);
    for (const list of lists) expect(list.args[0].input).toMatchObject({ cluster: "browsers", startedBy: poolTaskStartedBy, desiredStatus: "RUNNING" });
  });

  it("leaves out a task another launch is still starting, but reports one stuck pending past the start timeout", async () => {
    const { fake, browsers } = providerOn("browsers", { startTimeoutSeconds: 60 });
    const { ref } = await browsers.launch({ sessionId: "bs_running", startUrl: null });
    const young = fake.pendingElsewhere("browsers", new Date(Date.now() - 10_000));
    const stuck = fake.pendingElsewhere("browsers", new Date(Date.now() - 61_000));

    const running = await browsers.running();

    expect(running.sort()).toEqual([ref, stuck].sort());
    expect(running).not.toContain(young);
  });

  it("describes the listed tasks at most a hundred at a time", async () => {
    const { fake, browsers } = providerOn();
    for (let count = 0; count < 101; count += 1) fake.pendingElsewhere("browsers", new Date(0));

    expect(await browsers.running()).toHaveLength(101);
    const batches = fake.mock.commandCalls(DescribeTasksCommand).map((call) => call.args[0].input.tasks?.length);
    expect(batches).toEqual([100, 1]);
  });

  it("grants and ends a lease on the task's admin port with the task's admin secret", async () => {
    const { browsers } = providerOn();
    const { ref } = await browsers.launch({ sessionId: "bs_leased", startUrl: null });
    const expiresAt = new Date("2030-01-01T00:00:00.000Z");
    const before = router.calls.length;

    await browsers.grantLease(ref, { id: "2029-12-31T23:00:00.000Z", token: "the-lease-token", expiresAt });
    await browsers.endLease(ref, "2029-12-31T23:00:00.000Z");

    const authorization = `Bearer ${await adminSecret("bs_leased")}`;
    expect(router.calls.slice(before)).toEqual([
      {
        task: ref.split("/").at(-1),
        method: "PUT",
        path: "/lease",
        authorization,
        body: JSON.stringify({ lease_id: "2029-12-31T23:00:00.000Z", token_sha256: sha256Hex("the-lease-token"), expires_at: expiresAt.toISOString() }),
      },
      { task: ref.split("/").at(-1), method: "DELETE", path: "/lease?lease_id=2029-12-31T23%3A00%3A00.000Z", authorization, body: "" },
    ]);
  });

  it("needs no admin call to end the lease of a task that is gone, and refuses to grant one", async () => {
    const { fake, browsers } = providerOn();
    const { ref } = await browsers.launch({ sessionId: "bs_gone", startUrl: null });
    fake.stopOnItsOwn(ref);
    const before = router.calls.length;
    await expect(browsers.endLease(ref, "a lease")).resolves.toBeUndefined();
    await expect(browsers.grantLease(ref, { id: "a lease", token: "t", expiresAt: new Date(Date.now() + 60_000) })).rejects.toThrow("is not running");
    expect(router.calls.length).toBe(before);
  });
});
