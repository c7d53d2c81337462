import { awaitInputCore } from "../domain/flows/step.ts";
import { perConfig } from "./config.ts";
import { connectionStore } from "./table.ts";
import { flowSignal } from "./workflow-engine.ts";

/**
 * The task state that waits for a flow's input, apart from the login step so its function carries
 * neither the login engine nor the archive and secret clients.
 */
export const inputWaits = perConfig((config) => awaitInputCore({ connections: connectionStore(config), signal: flowSignal(config) }));
