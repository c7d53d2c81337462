import { healthCheckCore } from "../domain/connection-workflow.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { connectionStore } from "./table.ts";

export const healthChecks = perConfig((config) =>
  healthCheckCore({ connections: connectionStore(config), timing: workflowTiming(config), timelineRetentionDays: config.TIMELINE_RETENTION_DAYS }),
);
