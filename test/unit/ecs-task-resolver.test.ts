import { DescribeTasksCommand, ECSClient, type DescribeTasksCommandInput, type Task } from "@aws-sdk/client-ecs";
import { mockClient } from "aws-sdk-client-mock";
import { afterEach, describe, expect, it, vi } from "vitest";
import { poolTaskStartedBy } from "#shared/browsers/ecs-tasks.ts";
import { ecsTaskResolver } from "#shared/browsers/router/ecs-task-resolver.ts";

const cluster = "arn:aws:ecs:eu-west-1:123456789012:cluster/browsers";
const taskId = "0123456789abcdef0123456789abcdef";

/** A task as DescribeTasks shows it, by default a running pool browser at 10.0.1.5. */
function task(overrides: Partial<Task> = {}): Task {
  return {
    taskArn: `arn:aws:ecs:eu-west-1:123456789012:task/browsers/${taskId}`,
    startedBy: poolTaskStartedBy,
    lastStatus: "RUNNING",
    desiredStatus: "RUNNING",
    attachments: [{ type: "ElasticNetworkInterface", details: [{ name: "privateIPv4Address", value: "10.0.1.5" }] }],
    ...overrides,
  };
}

/** A resolver over a cluster that shows `shows.task` under `taskId` (and nothing under any other id). */
function resolverOver(shown: Task | undefined, cacheSeconds?: number) {
  const ecs = new ECSClient({ region: "eu-west-1", credentials: { accessKeyId: "test", secretAccessKey: "test" } });
  const mock = mockClient(ecs);
  const shows = { task: shown };
  mock.on(DescribeTasksCommand).callsFake((input: DescribeTasksCommandInput) => {
    const found = input.cluster === cluster && input.tasks?.[0] === taskId ? shows.task : undefined;
    return { tasks: found ? [found] : [], failures: found ? [] : [{ arn: input.tasks?.[0], reason: "MISSING" }] };
  });
  const resolve = ecsTaskResolver({ ecs, cluster, taskPort: 8080, cacheSeconds });
  return { resolve, mock, shows };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the router's ECS task resolver", () => {
  it("answers a running pool task's private address with the proxy's port", async () => {
    const { resolve, mock } = resolverOver(task());

    expect(await resolve(taskId)).toBe("http://10.0.1.5:8080");
    expect(mock.commandCalls(DescribeTasksCommand).map((call) => call.args[0].input)).toEqual([{ cluster, tasks: [taskId] }]);
  });

  it.each([
    ["a task of the cluster that the pool did not start", task({ startedBy: "ecs-svc/1234" })],
    ["a task that is stopping", task({ desiredStatus: "STOPPED" })],
    ["a task that has stopped", task({ lastStatus: "STOPPED", desiredStatus: "STOPPED" })],
    ["a pool task still starting", task({ lastStatus: "PROVISIONING" })],
    ["a task unknown to the cluster", undefined],
  ])("answers nothing for %s", async (_what, shown) => {
    const { resolve } = resolverOver(shown);

    expect(await resolve(taskId)).toBeUndefined();
  });

  it("reuses an answer within the cache time, and asks again after it", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const { resolve, mock, shows } = resolverOver(task(), 5);
    await resolve(taskId);

    shows.task = task({ desiredStatus: "STOPPED" });
    vi.advanceTimersByTime(4000);
    expect(await resolve(taskId)).toBe("http://10.0.1.5:8080");
    expect(mock.commandCalls(DescribeTasksCommand)).toHaveLength(1);

    vi.advanceTimersByTime(1001);
    expect(await resolve(taskId)).toBeUndefined();
    expect(mock.commandCalls(DescribeTasksCommand)).toHaveLength(2);
  });

  it("asks again about a task still starting, so it resolves as soon as it runs", async () => {
    const { resolve, mock, shows } = resolverOver(task({ lastStatus: "PENDING" }));
    expect(await resolve(taskId)).toBeUndefined();

    shows.task = task();

    expect(await resolve(taskId)).toBe("http://10.0.1.5:8080");
    expect(mock.commandCalls(DescribeTasksCommand)).toHaveLength(2);
  });

  it("reuses the answer that a task is unknown", async () => {
    const { resolve, mock } = resolverOver(undefined);
    await resolve(taskId);

    expect(await resolve(taskId)).toBeUndefined();
    expect(mock.commandCalls(DescribeTasksCommand)).toHaveLength(1);
  });
});
