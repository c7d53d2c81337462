import { continuationCore } from "../domain/connection-workflow.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { table } from "./table.ts";
import { workflowEngine } from "./workflow-engine.ts";

export const continuation = perConfig((config) =>
  continuationCore({ connections: table(config).connections, engine: workflowEngine(config), timing: workflowTiming(config) }),
);
