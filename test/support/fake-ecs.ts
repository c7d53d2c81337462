import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import {
  DescribeTasksCommand,
  ECSClient,
  InvalidParameterException,
  ListTasksCommand,
  RunTaskCommand,
  StopTaskCommand,
  type DescribeTasksCommandInput,
  type ListTasksCommandInput,
  type RunTaskCommandInput,
  type StopTaskCommandInput,
  type Task,
} from "@aws-sdk/client-ecs";
import { mockClient } from "aws-sdk-client-mock";
import { ecsBrowsers, poolTaskStartedBy } from "#shared/browsers/ecs-tasks.ts";

/** An ECS client whose cluster lives in memory, behind aws-sdk-client-mock: tasks start RUNNING. */
export function fakeEcs() {
  const ecs = new ECSClient({ region: "eu-west-1", credentials: { accessKeyId: "test", secretAccessKey: "test" } });
  const mock = mockClient(ecs);
  const tasks = new Map<string, Task>();
  let launched = 0;
  const listPageSize = 2;
  const nextArn = (cluster: string | undefined) => `arn:aws:ecs:eu-west-1:123456789012:task/${cluster}/${String(++launched).padStart(32, "0")}`;

  const runTask = (input: RunTaskCommandInput) => {
    const taskArn = nextArn(input.cluster);
    const task: Task = {
      taskArn,
      startedBy: input.startedBy,
      desiredStatus: "RUNNING",
      lastStatus: "RUNNING",
      createdAt: new Date(),
      tags: input.tags,
      // As ECS does: DescribeTasks shows a task's overrides, environment included.
      overrides: input.overrides,
      attachments: [{ type: "ElasticNetworkInterface", details: [{ name: "privateIPv4Address", value: "127.0.0.1" }] }],
    };
    tasks.set(taskArn, task);
    return { tasks: [task], failures: [] };
  };
  mock.on(RunTaskCommand).callsFake(runTask);
  mock.on(DescribeTasksCommand).callsFake((input: DescribeTasksCommandInput) => {
    const arns = input.tasks ?? [];
    return {
      tasks: arns.flatMap((arn) => tasks.get(arn) ?? []),
      failures: arns.filter((arn) => !tasks.has(arn)).map((arn) => ({ arn, reason: "MISSING" })),
    };
  });
  const stopTask = (input: StopTaskCommandInput) => {
    const task = input.task === undefined ? undefined : tasks.get(input.task);
    if (!task) throw new InvalidParameterException({ message: "The referenced task was not found.", $metadata: {} });
    Object.assign(task, { desiredStatus: "STOPPED", lastStatus: "STOPPED", stoppedReason: input.reason });
    return { task };
  };
  mock.on(StopTaskCommand).callsFake(stopTask);
  const listTasks = (input: ListTasksCommandInput) => {
    const matching = [...tasks.values()]
      .filter((task) => task.startedBy === input.startedBy && task.desiredStatus === (input.desiredStatus ?? "RUNNING"))
      .map((task) => task.taskArn as string);
    const start = Number(input.nextToken ?? 0);
    const end = start + listPageSize;
    return { taskArns: matching.slice(start, end), nextToken: end < matching.length ? String(end) : undefined };
  };
  mock.on(ListTasksCommand).callsFake(listTasks);

  return {
    ecs,
    mock,
    tasks,
    /** What RunTask, StopTask and ListTasks do to the cluster, for a test that wraps them to run more beside. */
    runTask,
    stopTask,
    listTasks,
    /** What ECS shows of a task that exited by itself (Chromium crashed, the task was reclaimed). */
    stopOnItsOwn(arn: string) {
      Object.assign(tasks.get(arn) as Task, { desiredStatus: "STOPPED", lastStatus: "STOPPED", stoppedReason: "Essential container in task exited" });
    },
    /** A pool task some other launch started at `createdAt`, which ECS still shows as pending. */
    pendingElsewhere(cluster: string, createdAt: Date) {
      const taskArn = nextArn(cluster);
      tasks.set(taskArn, { taskArn, startedBy: poolTaskStartedBy, desiredStatus: "RUNNING", lastStatus: "PENDING", createdAt });
      return taskArn;
    },
  };
}

export interface AdminCall {
  /** The task id the call was addressed to, as the router's path names it. */
  task: string;
  method: string;
  /** The path on the task's lease proxy, after the router's `/browsers/<task id>`. */
  path: string;
  authorization: string | undefined;
  body: string;
}

/**
 * A 127.0.0.1 stand-in for the router in front of the tasks' lease proxies: records every admin
 * call, answers the health check 200 and the lease calls 204.
 */
export async function standInRouter() {
  const calls: AdminCall[] = [];
  let healthRefusals = 0;
  let refusalStatus = 503;
  const server = createServer(async (request: IncomingMessage, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    const [, task = "", path = ""] = /^\/browsers\/([^/]+)(\/.*)$/.exec(request.url as string) ?? [];
    calls.push({ task, method: request.method as string, path, authorization: request.headers.authorization, body });
    if (path !== "/health") return void response.writeHead(204).end();
    if (healthRefusals > 0) {
      healthRefusals -= 1;
      return void response.writeHead(refusalStatus).end(refusalStatus === 404 ? "no such browser task" : "chromium does not answer");
    }
    response.writeHead(200).end("chromium is up");
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    /**
     * Answers the next `times` health checks with `status`: 503 as an entry whose Chromium does not
     * answer yet, 404 as the router answers for a task it does not find.
     */
    refuseHealth(times: number, status = 503) {
      healthRefusals = times;
      refusalStatus = status;
    },
    stop: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}

/** Admin secrets as KMS's GenerateMac derives them, under a key held here. */
export const hmacAdminSecrets = (key: string) => async (sessionId: string) => createHmac("sha256", key).update(sessionId).digest("base64url");

/** The ECS provider over `ecs` (a `fakeEcs()` client), reaching its tasks through the stand-in router at `routerUrl`. */
export function fakeEcsBrowsers(ecs: ReturnType<typeof fakeEcs>["ecs"], routerUrl: string) {
  return ecsBrowsers({
    ecs,
    cluster: "browsers",
    taskDefinition: "acs-browser:1",
    subnets: ["subnet-a"],
    securityGroups: ["sg-browser"],
    assignPublicIp: false,
    containerName: "browser",
    adminSecret: hmacAdminSecrets("a key only the pool functions hold, long enough"),
    routerUrl,
  });
}
