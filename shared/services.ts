import { apiKeys } from "./composition/api-keys.ts";
import { perConfig } from "./composition/config.ts";
import { connectionLifecycle } from "./composition/connection-lifecycle.ts";
import { connections } from "./composition/connections.ts";
import { continuation } from "./composition/continuation.ts";
import { healthChecks } from "./composition/health-checks.ts";
import { poolFiller, pools } from "./composition/pools.ts";
import { profileArchives } from "./composition/profile-archives.ts";
import { profileImport } from "./composition/profile-import.ts";
import { profiles } from "./composition/profiles.ts";
import { connectionStore, tableClient } from "./composition/table.ts";

/**
 * Everything at once, for the local runtime, scripts and tests. A Lambda handler imports only the
 * factories it calls from shared/composition, so its bundle carries only the clients they build.
 */
export const services = perConfig((config) => ({
  config,
  db: tableClient(config),
  connectionStore: connectionStore(config),
  connections: { ...connections(config), ...connectionLifecycle(config) },
  workflow: { ...healthChecks(config), ...continuation(config) },
  profiles: { ...profiles(config), ...profileArchives(config), ...profileImport(config) },
  pools: pools(config),
  poolFiller: poolFiller(config),
  apiKeys: apiKeys(config),
}));

export type Services = ReturnType<typeof services>;
