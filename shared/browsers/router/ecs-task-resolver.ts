import type { ECSClient } from "@aws-sdk/client-ecs";
import { isStopping, poolTasks, privateIpOf, taskIdOf } from "../ecs-tasks.ts";

export interface EcsTaskResolverOptions {
  ecs: ECSClient;
  cluster: string;
  /** The lease proxy's port in every browser task (BROWSER_TASK_PORT of the task definition). */
  taskPort: number;
  /**
   * How long a list of the running tasks is used (5 s unless set). For that long a stopped task may
   * still resolve; whatever then answers at its address checks the lease token and the admin secret
   * itself.
   */
  cacheSeconds?: number;
  /** The clock, in milliseconds since the epoch: `Date.now` unless set. */
  now?: () => number;
}

/** How soon an unknown id may have the tasks listed again. */
const minRefreshIntervalMs = 1000;

/**
 * Finds a pooled browser's lease proxy by its ECS task id, among this cluster's tasks that the pool
 * started and that run. Anyone may send any task id, and ECS throttles an account's calls as a
 * whole, so no request may cost the pool functions their ECS calls: the router answers from its
 * list of the running pool tasks, which it renews once older than the cache time, and on an unknown
 * id (a task that just started) at most once a second, all waiting callers sharing one listing.
 * While ECS fails, the last list keeps answering.
 */
export function ecsTaskResolver(options: EcsTaskResolverOptions): (taskId: string) => Promise<string | undefined> {
  const cacheMs = (options.cacheSeconds ?? 5) * 1000;
  const now = options.now ?? Date.now;
  let origins = new Map<string, string>();
  let refreshedAt = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> | undefined;

  async function refresh(): Promise<void> {
    const { tasks } = await poolTasks(options.ecs, options.cluster);
    origins = new Map(
      tasks.flatMap((task) => {
        const ip = task.lastStatus === "RUNNING" && !isStopping(task) ? privateIpOf(task) : undefined;
        return task.taskArn && ip ? [[taskIdOf(task.taskArn), `http://${ip}:${options.taskPort}`] as const] : [];
      }),
    );
  }

  return async (taskId) => {
    const age = now() - refreshedAt;
    if (!refreshing && age >= minRefreshIntervalMs && (age >= cacheMs || !origins.has(taskId))) {
      refreshedAt = now();
      refreshing = refresh().finally(() => {
        refreshing = undefined;
      });
    }
    await refreshing;
    return origins.get(taskId);
  };
}
