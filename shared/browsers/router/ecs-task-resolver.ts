import { DescribeTasksCommand, type ECSClient, type Task } from "@aws-sdk/client-ecs";
import { isStopping, poolTaskStartedBy, privateIpOf } from "../ecs-tasks.ts";

export interface EcsTaskResolverOptions {
  ecs: ECSClient;
  cluster: string;
  /** The lease proxy's port in every browser task (BROWSER_TASK_PORT of the task definition). */
  taskPort: number;
  /**
   * How long an answer is reused (5 s unless set). For that long a stopped task may still resolve;
   * whatever then answers at its address checks the lease token and the admin secret itself.
   */
  cacheSeconds?: number;
}

/** Enough for every browser of the largest pools, and a bound on what unknown ids can fill. */
const maxCachedTasks = 1000;

/** Neither running nor ever to run: the same answer for as long as the cache keeps it. */
const isFinal = (task: Task | undefined) => task === undefined || task.startedBy !== poolTaskStartedBy || isStopping(task);

/**
 * Finds a pooled browser's lease proxy by its ECS task id, among this cluster's tasks that the pool
 * started and that run. A task's address never changes while it runs, so answers are reused for a
 * few seconds rather than asking ECS at every connection; a task still starting is asked about
 * again, so that it resolves as soon as it runs.
 */
export function ecsTaskResolver(options: EcsTaskResolverOptions): (taskId: string) => Promise<string | undefined> {
  const cacheMs = (options.cacheSeconds ?? 5) * 1000;
  const cache = new Map<string, { origin: string | undefined; until: number }>();

  function remember(taskId: string, origin: string | undefined): void {
    cache.delete(taskId);
    // Map keeps insertion order: the first key is the oldest answer.
    const oldest = cache.keys().next();
    if (cache.size >= maxCachedTasks && !oldest.done) cache.delete(oldest.value);
    cache.set(taskId, { origin, until: Date.now() + cacheMs });
  }

  return async (taskId) => {
    const cached = cache.get(taskId);
    if (cached && Date.now() < cached.until) return cached.origin;
    const { tasks } = await options.ecs.send(new DescribeTasksCommand({ cluster: options.cluster, tasks: [taskId] }));
    const task = tasks?.[0];
    if (isFinal(task)) {
      remember(taskId, undefined);
      return undefined;
    }
    const ip = task?.lastStatus === "RUNNING" ? privateIpOf(task) : undefined;
    if (!ip) return undefined;
    const origin = `http://${ip}:${options.taskPort}`;
    remember(taskId, origin);
    return origin;
  };
}
