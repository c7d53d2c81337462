import { poolFiller as poolFillerCore } from "../domain/pool-filler.ts";
import { poolsCore } from "../domain/pools.ts";
import { resolveProfile } from "../domain/profiles.ts";
import { browsers } from "./browsers.ts";
import { perConfig } from "./config.ts";
import { table } from "./table.ts";

export const pools = perConfig((config) => {
  const { pools, profiles } = table(config);
  return poolsCore({
    pools,
    browsers: browsers(config),
    resolveProfile: async (org, ref) => (await resolveProfile(profiles, org, ref.id || ref.name || "")).id,
  });
});

/** Keeps pools at their minimum size; only the local runtime runs it (no AWS provider yet). */
export const poolFiller = perConfig((config) => poolFillerCore({ pools: table(config).pools, browsers: browsers(config) }));
