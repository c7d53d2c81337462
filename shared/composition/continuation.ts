import { continuationCore } from "../domain/health-checks.ts";
import { perConfig, workflowTiming } from "./config.ts";
import { connectionStore } from "./table.ts";
import { workflowEngine } from "./workflow-engine.ts";

export const continuation = perConfig((config) =>
  continuationCore({ connections: connectionStore(config), engine: workflowEngine(config), timing: workflowTiming(config) }),
);
