import { expireFlowCore } from "../domain/flows/step.ts";
import { perConfig } from "./config.ts";
import { connectionStore } from "./table.ts";

/** The task state that ends a flow whose wait timed out: it only writes the table. */
export const flowExpiry = perConfig((config) => expireFlowCore({ connections: connectionStore(config), timelineRetentionDays: config.TIMELINE_RETENTION_DAYS }));
