import { connectionLifecycleCore } from "../domain/connections.ts";
import { perConfig, targetPolicy, workflowTiming } from "./config.ts";
import { credentialStore } from "./credential-records.ts";
import { connectionStore, profileStore } from "./table.ts";
import { workflowEngine } from "./workflow-engine.ts";

export const connectionLifecycle = perConfig((config) => {
  return connectionLifecycleCore({
    connections: connectionStore(config),
    profiles: profileStore(config),
    credentials: credentialStore(config),
    policy: targetPolicy(config),
    workflow: workflowEngine(config),
    timing: workflowTiming(config),
  });
});
