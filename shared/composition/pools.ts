import { poolFiller as poolFillerCore } from "../domain/pool-filler.ts";
import { poolsCore } from "../domain/pools.ts";
import { resolveProfile } from "../domain/profiles.ts";
import { browsers } from "./browsers.ts";
import { perConfig } from "./config.ts";
import { poolStore, profileStore } from "./table.ts";

export const pools = perConfig((config) =>
  poolsCore({
    pools: poolStore(config),
    browsers: browsers(config),
    resolveProfile: async (org, ref) => (await resolveProfile(profileStore(config), org, ref.id || ref.name || "")).id,
  }),
);

/** Keeps pools at their minimum size; only the local runtime runs it (no AWS provider yet). */
export const poolFiller = perConfig((config) => poolFillerCore({ pools: poolStore(config), browsers: browsers(config) }));
