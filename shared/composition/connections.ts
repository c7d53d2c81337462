import { connectionsCore } from "../domain/connections.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { credentialStore } from "./credential-records.ts";
import { connectionStore, profileStore } from "./table.ts";

export const connections = perConfig((config) => {
  return connectionsCore({ connections: connectionStore(config), profiles: profileStore(config), credentials: credentialStore(config), policy: targetPolicy(config) });
});
