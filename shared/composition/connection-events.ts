import { connectionEventsCore } from "../domain/connection-events.ts";
import { perConfig } from "./config.ts";
import { connectionStore, streamSlotStore } from "./table.ts";

export const connectionEvents = perConfig((config) =>
  connectionEventsCore({
    connections: connectionStore(config),
    slots: streamSlotStore(config),
    pollMilliseconds: config.SSE_POLL_MILLISECONDS,
    heartbeatMilliseconds: config.SSE_HEARTBEAT_SECONDS * 1000,
  }),
);
