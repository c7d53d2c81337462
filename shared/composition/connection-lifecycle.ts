import { connectionLifecycleCore } from "../domain/connections.ts";
import { perConfig, targetPolicy, workflowTiming } from "./config.ts";
import { table } from "./table.ts";
import { workflowEngine } from "./workflow-engine.ts";

export const connectionLifecycle = perConfig((config) => {
  const { connections, profiles } = table(config);
  return connectionLifecycleCore({
    connections,
    profiles,
    policy: targetPolicy(config),
    workflow: workflowEngine(config),
    timing: workflowTiming(config),
  });
});
