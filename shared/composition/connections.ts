import { connectionsCore } from "../domain/connections.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { table } from "./table.ts";

export const connections = perConfig((config) => {
  const { connections, profiles } = table(config);
  return connectionsCore({ connections, profiles, policy: targetPolicy(config) });
});
