import { loadConfig, type Config } from "../config.ts";
import type { TargetPolicy } from "../policy/scope.ts";
import type { WorkflowTiming } from "../domain/workflow.ts";

let processConfig: Config | undefined;

/**
 * Memoizes a factory per config: a process (a Lambda cold start, or the local runtime's first use)
 * reads its environment once and builds each client once, and a script that brings its own config
 * gets its own clients. Each factory lives in its own module, so a function's bundle holds only the
 * SDK clients its handler's imports reach.
 */
export function perConfig<T>(build: (config: Config) => T): (config?: Config) => T {
  const built = new WeakMap<Config, T>();
  return (config = (processConfig ??= loadConfig())) => {
    if (!built.has(config)) built.set(config, build(config));
    return built.get(config)!;
  };
}

export function workflowTiming(config: Config): WorkflowTiming {
  return { timeScale: config.LOCAL_TIME_SCALE, maxIterations: config.WORKFLOW_MAX_ITERATIONS, maxAgeDays: config.WORKFLOW_MAX_AGE_DAYS };
}

export function targetPolicy(config: Config): TargetPolicy {
  return { allowPrivateTargets: config.DEPLOYMENT_MODE === "local" };
}
