import { connectionsCore } from "../domain/connections.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { connectionStore, profileStore } from "./table.ts";

export const connections = perConfig((config) => {
  return connectionsCore({ connections: connectionStore(config), profiles: profileStore(config), policy: targetPolicy(config) });
});
