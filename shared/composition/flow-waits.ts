import { awaitInputCore, expireFlowCore } from "../domain/login-flows.ts";
import { perConfig } from "./config.ts";
import { connectionStore } from "./table.ts";
import { flowSignal } from "./workflow-engine.ts";

/**
 * The two task states around a flow's wait for input, apart from the login step so their functions
 * carry neither the login engine nor the archive and secret clients.
 */
export const inputWaits = perConfig((config) => awaitInputCore({ connections: connectionStore(config), signal: flowSignal(config) }));

export const flowExpiry = perConfig((config) => expireFlowCore({ connections: connectionStore(config), timelineRetentionDays: config.TIMELINE_RETENTION_DAYS }));
