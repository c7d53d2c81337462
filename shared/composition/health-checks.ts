import { healthCheckCore } from "../domain/connection-workflow.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { table } from "./table.ts";

export const healthChecks = perConfig((config) =>
  healthCheckCore({ connections: table(config).connections, timing: workflowTiming(config), timelineRetentionDays: config.TIMELINE_RETENTION_DAYS }),
);
