import type { Config } from "../config.ts";
import type { StartUrlAddressPolicy } from "../domain/pool.ts";
import { poolFiller as poolFillerCore } from "../domain/pool-filler.ts";
import { poolsCore } from "../domain/pools.ts";
import { resolveProfile } from "../domain/profiles.ts";
import { systemResolver } from "../login/system-resolver.ts";
import { browsers } from "./browsers.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { poolStore, profileStore } from "./table.ts";

/** AWS mode holds start URLs to the login engine's address policy; local mode's browsers may open any page. */
function startUrlAddresses(config: Config): StartUrlAddressPolicy | undefined {
  if (config.DEPLOYMENT_MODE !== "aws") return undefined;
  return { ...targetPolicy(config), resolve: systemResolver };
}

export const pools = perConfig((config) =>
  poolsCore({
    pools: poolStore(config),
    browsers: browsers(config),
    resolveProfile: async (org, ref) => (await resolveProfile(profileStore(config), org, ref.id || ref.name || "")).id,
    startUrlAddresses: startUrlAddresses(config),
  }),
);

/** Keeps pools at their minimum size: the local runtime's supervisor runs it, and in AWS a scheduled function. */
export const poolFiller = perConfig((config) =>
  poolFillerCore({ pools: poolStore(config), browsers: browsers(config), startUrlAddresses: startUrlAddresses(config) }),
);
