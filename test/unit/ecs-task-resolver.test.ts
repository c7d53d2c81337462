import { randomBytes } from "node:crypto";
import { DescribeTasksCommand, ListTasksCommand, type ListTasksCommandInput, type Task } from "@aws-sdk/client-ecs";
import { describe, expect, it } from "vitest";
import { poolTaskStartedBy, taskIdOf } from "#shared/browsers/ecs-tasks.ts";
import { ecsTaskResolver } from "#shared/browsers/router/ecs-task-resolver.ts";
import { fakeEcs } from "../support/fake-ecs.ts";

const cluster = "browsers";
/** Every task of the fake cluster is at 127.0.0.1; the router reaches its lease proxy there. */
const origin = "http://127.0.0.1:8080";
const unknownTaskId = () => randomBytes(16).toString("hex");

/** A resolver over a fake cluster, on a clock that moves only when the test moves it. */
function resolverOver() {
  const fake = fakeEcs();
  const clock = { ms: 0 };
  const resolve = ecsTaskResolver({ ecs: fake.ecs, cluster, taskPort: 8080, now: () => clock.ms });
  /** Starts a task, RUNNING at once, and gives its ARN. */
  const launch = (startedBy = poolTaskStartedBy) => fake.runTask({ cluster, startedBy, taskDefinition: "acs-browser:1" }).tasks[0]?.taskArn as string;
  const change = (arn: string, shown: Partial<Task>) => Object.assign(fake.tasks.get(arn) as Task, shown);
  /** How often the pool's tasks were listed: a listing starts with a request for its first page. */
  const listings = () => fake.mock.commandCalls(ListTasksCommand).filter((call) => call.args[0].input.nextToken === undefined).length;
  return { fake, clock, resolve, launch, change, listings };
}

describe("the router's ECS task resolver", () => {
  it("answers a running pool task's private address with the proxy's port, from a listing of the pool's tasks", async () => {
    const { fake, resolve, launch } = resolverOver();
    const arns = [launch(), launch(), launch()];

    expect(await resolve(taskIdOf(arns[2] as string))).toBe(origin);
    expect(await resolve(taskIdOf(arns[0] as string))).toBe(origin);
    const listed = fake.mock.commandCalls(ListTasksCommand).map((call) => call.args[0].input);
    expect(listed.length).toBeGreaterThan(1);
    for (const input of listed) expect(input).toMatchObject({ cluster, startedBy: poolTaskStartedBy, desiredStatus: "RUNNING" });
    expect(fake.mock.commandCalls(DescribeTasksCommand).map((call) => call.args[0].input)).toEqual([{ cluster, tasks: arns }]);
  });

  it("describes the listed tasks in batches of 100, never one task by itself", async () => {
    const { fake, resolve, launch } = resolverOver();
    const arns = Array.from({ length: 101 }, () => launch());

    expect(await resolve(taskIdOf(arns[100] as string))).toBe(origin);
    expect(fake.mock.commandCalls(DescribeTasksCommand).map((call) => call.args[0].input.tasks)).toEqual([arns.slice(0, 100), arns.slice(100)]);
  });

  it.each<[string, (over: ReturnType<typeof resolverOver>) => string]>([
    ["a task that has stopped", ({ fake, launch }) => {
      const arn = launch();
      fake.stopOnItsOwn(arn);
      return taskIdOf(arn);
    }],
    ["a task listed while running that is stopping by the time it is described", ({ fake, launch, change }) => {
      const arn = launch();
      fake.mock.on(ListTasksCommand).callsFake((input: ListTasksCommandInput) => {
        const page = fake.listTasks(input);
        change(arn, { desiredStatus: "STOPPED" });
        return page;
      });
      return taskIdOf(arn);
    }],
    ["a task of the cluster that the pool did not start", ({ launch }) => taskIdOf(launch("ecs-svc/1234"))],
    ["a pool task still starting", ({ launch, change }) => {
      const arn = launch();
      change(arn, { lastStatus: "PENDING" });
      return taskIdOf(arn);
    }],
    ["a task unknown to the cluster", () => unknownTaskId()],
  ])("answers nothing for %s", async (_what, arrange) => {
    const over = resolverOver();
    const running = over.launch();
    const taskId = arrange(over);

    expect(await over.resolve(taskId)).toBeUndefined();
    expect(await over.resolve(taskIdOf(running))).toBe(origin);
  });

  it("lists the tasks once for a burst of unknown ids, and not again for another within a second", async () => {
    const { clock, resolve, launch, listings } = resolverOver();
    const taskId = taskIdOf(launch());

    const burst = await Promise.all(Array.from({ length: 50 }, () => resolve(unknownTaskId())));
    expect(burst.every((answer) => answer === undefined)).toBe(true);
    expect(listings()).toBe(1);

    clock.ms = 999;
    const later = await Promise.all(Array.from({ length: 50 }, () => resolve(unknownTaskId())));
    expect(later.every((answer) => answer === undefined)).toBe(true);
    expect(await resolve(taskId)).toBe(origin);
    expect(listings()).toBe(1);

    clock.ms = 1000;
    expect(await resolve(unknownTaskId())).toBeUndefined();
    expect(listings()).toBe(2);
  });

  it("resolves a task that runs only after a listing, on a miss once a second has passed since", async () => {
    const { clock, resolve, launch, change, listings } = resolverOver();
    const arn = launch();
    change(arn, { lastStatus: "PENDING" });
    expect(await resolve(taskIdOf(arn))).toBeUndefined();

    change(arn, { lastStatus: "RUNNING" });
    clock.ms = 999;
    expect(await resolve(taskIdOf(arn))).toBeUndefined();
    clock.ms = 1000;
    expect(await resolve(taskIdOf(arn))).toBe(origin);
    expect(listings()).toBe(2);
  });

  it("answers for a task that stopped until the list is older than the cache time, 5 s unless set", async () => {
    const { fake, clock, resolve, launch, listings } = resolverOver();
    const arn = launch();
    expect(await resolve(taskIdOf(arn))).toBe(origin);

    fake.stopOnItsOwn(arn);
    clock.ms = 4999;
    expect(await resolve(taskIdOf(arn))).toBe(origin);
    expect(listings()).toBe(1);
    clock.ms = 5000;
    expect(await resolve(taskIdOf(arn))).toBeUndefined();
    expect(listings()).toBe(2);
  });

  it("has lookups made while a listing runs wait for it rather than list again, whatever the clock says", async () => {
    const { fake, clock, resolve, launch, listings } = resolverOver();
    const [first, second] = [launch(), launch()].map(taskIdOf) as [string, string];

    const lookups = [resolve(first)];
    clock.ms = 5000;
    lookups.push(resolve(second), resolve(first), resolve(unknownTaskId()));

    expect(await Promise.all(lookups)).toEqual([origin, origin, origin, undefined]);
    expect(listings()).toBe(1);
    expect(fake.mock.commandCalls(DescribeTasksCommand)).toHaveLength(1);
  });

  it("fails the lookups that waited for a listing ECS refused, and lists again no sooner than a second later", async () => {
    const { fake, clock, resolve, launch, listings } = resolverOver();
    const taskId = taskIdOf(launch());
    fake.mock.on(ListTasksCommand).rejects(new Error("Rate exceeded"));

    const failed = await Promise.allSettled([resolve(taskId), resolve(taskId)]);
    expect(failed.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(listings()).toBe(1);

    fake.mock.on(ListTasksCommand).callsFake(fake.listTasks);
    clock.ms = 999;
    expect(await resolve(taskId)).toBeUndefined();
    expect(listings()).toBe(1);
    clock.ms = 1000;
    expect(await resolve(taskId)).toBe(origin);
    expect(listings()).toBe(2);
  });
});
