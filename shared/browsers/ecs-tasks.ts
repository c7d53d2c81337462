import { randomBytes } from "node:crypto";
import {
  DescribeTasksCommand,
  InvalidParameterException,
  paginateListTasks,
  RunTaskCommand,
  StopTaskCommand,
  waitUntilTasksRunning,
  type ECSClient,
  type KeyValuePair,
  type Task,
} from "@aws-sdk/client-ecs";
import { log } from "../log.ts";
import type { BrowserProvider, LaunchedBrowser, LaunchSpec } from "../domain/browser-provider.ts";
import { sha256Hex } from "./task/digest.ts";
import { adminCallTimeoutMs, leaseCall, type LeaseChange } from "./task/lease-call.ts";

export interface EcsBrowsersOptions {
  ecs: ECSClient;
  cluster: string;
  /** The browser task's definition (family, family:revision or ARN); its container runs the entry. */
  taskDefinition: string;
  subnets: string[];
  securityGroups: string[];
  assignPublicIp: boolean;
  /** The container that runs `shared/browsers/task/entry.ts`, whose settings a launch overrides. */
  containerName: string;
  /**
   * Each task's admin secret, derived from its session id, so any pool function can recompute it
   * and no secret is stored per browser.
   */
  adminSecret: (sessionId: string) => Promise<string>;
  /**
   * The router's origin (`https://…`), through which both clients and the pool functions reach a
   * task: `<router>/browsers/<task id>/…` is the task's lease proxy.
   */
  routerUrl: string;
  /** How long a launch waits for its task to run and its entry to answer. */
  startTimeoutSeconds?: number;
}

/** Marks the tasks this service starts, so `running()` lists them and nothing else of the cluster. */
export const poolTaskStartedBy = "acs-pool";
const sessionIdTag = "acs:session-id";
const healthPollIntervalMs = 500;
/** The most tasks one DescribeTasks call accepts. */
const describeBatchSize = 100;

export function privateIpOf(task: Task): string | undefined {
  const networkInterface = task.attachments?.find((attachment) => attachment.type === "ElasticNetworkInterface");
  return networkInterface?.details?.find((detail) => detail.name === "privateIPv4Address")?.value;
}

/** The id that ends a task's ARN (`…:task/<cluster>/<id>`), by which the router finds the task. */
export const taskIdOf = (arn: string) => arn.slice(arn.lastIndexOf("/") + 1);

/** Where the router serves a task's lease proxy over http(s), for the admin calls. */
export const routedTaskOrigin = (routerUrl: string, arn: string) => `${new URL(routerUrl).origin}/browsers/${taskIdOf(arn)}`;

/** The DevTools URL a client is given for the task: `wss://` behind an https router. */
export function routedDevtoolsUrl(routerUrl: string, arn: string, sessionId: string): string {
  const url = new URL(`${routedTaskOrigin(routerUrl, arn)}/devtools/browser/${sessionId}`);
  url.protocol = new URL(routerUrl).protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

const sessionIdOf = (task: Task) => task.tags?.find((tag) => tag.key === sessionIdTag)?.value;

export const isStopping = (task: Task) => task.desiredStatus === "STOPPED" || task.lastStatus === "STOPPED";

/** The pool's tasks in the cluster that ECS means to run: their ARNs, and what DescribeTasks shows of them. */
export async function poolTasks(ecs: ECSClient, cluster: string): Promise<{ arns: string[]; tasks: Task[] }> {
  const arns: string[] = [];
  for await (const page of paginateListTasks({ client: ecs }, { cluster, startedBy: poolTaskStartedBy, desiredStatus: "RUNNING" })) {
    arns.push(...(page.taskArns ?? []));
  }
  const tasks: Task[] = [];
  for (let start = 0; start < arns.length; start += describeBatchSize) {
    const described = await ecs.send(new DescribeTasksCommand({ cluster, tasks: arns.slice(start, start + describeBatchSize) }));
    tasks.push(...(described.tasks ?? []));
  }
  return { arns, tasks };
}

/**
 * Pooled browsers as ECS Fargate tasks, one browser-task entry per task. A task is known by its ARN;
 * its address and session id are read back from ECS when needed, so every pool function (and a
 * later invocation) finds any browser again. Retries are the SDK's own.
 */
export function ecsBrowsers(options: EcsBrowsersOptions): BrowserProvider {
  const { ecs, cluster } = options;
  const taskOrigin = (arn: string) => routedTaskOrigin(options.routerUrl, arn);
  const startTimeoutSeconds = options.startTimeoutSeconds ?? 180;

  async function describeTask(arn: string): Promise<Task | undefined> {
    const { tasks } = await ecs.send(new DescribeTasksCommand({ cluster, tasks: [arn], include: ["TAGS"] }));
    return tasks?.[0];
  }

  async function destroy(ref: string): Promise<void> {
    try {
      // Stopping a task that has already stopped succeeds.
      await ecs.send(new StopTaskCommand({ cluster, task: ref, reason: "browser pool: destroyed" }));
    } catch (error) {
      // ECS answers an unknown task with a parameter error; only a task ECS does not know is gone.
      if (error instanceof InvalidParameterException && (await describeTask(ref)) === undefined) return;
      throw error;
    }
  }

  async function launch(spec: LaunchSpec): Promise<LaunchedBrowser> {
    const adminSecret = await options.adminSecret(spec.sessionId);
    const environment: KeyValuePair[] = [
      { name: "BROWSER_TASK_DEVTOOLS_ID", value: spec.sessionId },
      // Overrides can be read back by anyone allowed ecs:DescribeTasks and land in CloudTrail: the
      // task gets only the secret's digest, which does not authorize an admin call.
      { name: "BROWSER_TASK_ADMIN_SECRET_SHA256", value: sha256Hex(adminSecret) },
      ...(spec.startUrl === null ? [] : [{ name: "BROWSER_TASK_START_URL", value: spec.startUrl }]),
    ];
    const started = await ecs.send(
      new RunTaskCommand({
        cluster,
        taskDefinition: options.taskDefinition,
        launchType: "FARGATE",
        count: 1,
        startedBy: poolTaskStartedBy,
        // The SDK retries RunTask; one token per launch keeps a retry from starting a second task.
        clientToken: randomBytes(16).toString("hex"),
        networkConfiguration: {
          awsvpcConfiguration: {
            subnets: options.subnets,
            securityGroups: options.securityGroups,
            assignPublicIp: options.assignPublicIp ? "ENABLED" : "DISABLED",
          },
        },
        tags: [{ key: sessionIdTag, value: spec.sessionId }],
        overrides: { containerOverrides: [{ name: options.containerName, environment }] },
      }),
    );
    const arn = started.tasks?.[0]?.taskArn;
    if (!arn) {
      const reasons = (started.failures ?? []).map((failure) => [failure.reason, failure.detail].filter(Boolean).join(": ")).join("; ");
      throw new Error(`ECS did not start a browser task: ${reasons || "no task and no reason given"}`);
    }
    const deadline = Date.now() + startTimeoutSeconds * 1000;
    await running(arn)
      .then(async () => entryAnswers(arn, adminSecret, deadline))
      .catch(async (error: Error) => {
        // A task that never served must not hold a Fargate slot or be counted by `running()`.
        await destroy(arn).catch((destroyError: unknown) => {
          // The launch's own failure is what the caller must see; the task is reaped later as an orphan.
          log.warn("browser task not stopped after its launch failed", {
            taskArn: arn,
            error: destroyError instanceof Error ? destroyError.message : String(destroyError),
          });
        });
        throw error;
      });
    return { ref: arn, cdpWsUrl: routedDevtoolsUrl(options.routerUrl, arn, spec.sessionId), headless: true };
  }

  /** Waits for the task to run. */
  async function running(arn: string): Promise<void> {
    try {
      await waitUntilTasksRunning({ client: ecs, maxWaitTime: startTimeoutSeconds }, { cluster, tasks: [arn] });
    } catch {
      // Not rethrown: the waiter's error quotes the task as DescribeTasks shows it, overrides and
      // so the admin secret included.
      const task = await describeTask(arn);
      throw new Error(`browser task ${arn} did not run within ${startTimeoutSeconds} s (${task?.lastStatus ?? "unknown to ECS"}${task?.stoppedReason ? `: ${task.stoppedReason}` : ""})`);
    }
  }

  /**
   * Waits for the task's entry to answer its health check: ECS reports a task running before the
   * entry listens, which it does only once Chromium answers.
   */
  async function entryAnswers(arn: string, adminSecret: string, deadline: number): Promise<void> {
    const authorization = `Bearer ${adminSecret}`;
    let last = "no answer";
    while (Date.now() < deadline) {
      const attempt = await fetch(`${taskOrigin(arn)}/health`, {
        headers: { authorization },
        signal: AbortSignal.timeout(Math.max(1, Math.min(adminCallTimeoutMs, deadline - Date.now()))),
      }).then(
        (response) => response.status,
        (error: Error) => error.message,
      );
      if (attempt === 200) return;
      last = typeof attempt === "number" ? `HTTP ${attempt}` : attempt;
      // The router knows no such task: one whose entry exited has stopped, and waiting longer is no use.
      if (attempt === 404) {
        const task = await describeTask(arn);
        if (!task || isStopping(task)) throw new Error(`browser task ${arn} stopped before it served (${task?.stoppedReason ?? "unknown to ECS"})`);
      }
      await new Promise((waited) => setTimeout(waited, Math.min(healthPollIntervalMs, Math.max(0, deadline - Date.now()))));
    }
    throw new Error(`browser task ${arn} did not answer its health check within ${startTimeoutSeconds} s (${last})`);
  }

  /**
   * A task another launch is still starting: not yet running and younger than a launch may take.
   * Past that it is stuck, and reported so that it is reaped.
   */
  const isStarting = (task: Task) =>
    task.lastStatus !== "RUNNING" && task.createdAt !== undefined && Date.now() - task.createdAt.getTime() < startTimeoutSeconds * 1000;

  /** An admin call to the task's lease proxy; a task already gone needs none. */
  async function taskLeaseCall(ref: string, change: LeaseChange): Promise<void> {
    const task = await describeTask(ref);
    if (!task || isStopping(task)) {
      if ("end" in change) return;
      throw new Error(`browser task ${ref} is not running`);
    }
    const sessionId = sessionIdOf(task);
    if (!sessionId) throw new Error(`browser task ${ref} has no session id`);
    await leaseCall(taskOrigin(ref), await options.adminSecret(sessionId), change, `browser task ${ref}`);
  }

  return {
    launch,
    destroy,
    async running() {
      const { arns, tasks } = await poolTasks(ecs, cluster);
      const starting = new Set(tasks.filter(isStarting).map((task) => task.taskArn));
      return arns.filter((arn) => !starting.has(arn));
    },
    async grantLease(ref, lease) {
      await taskLeaseCall(ref, { grant: lease });
    },
    async endLease(ref, leaseId) {
      await taskLeaseCall(ref, { end: leaseId });
    },
  };
}
