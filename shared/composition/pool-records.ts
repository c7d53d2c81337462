import type { BrowserProvider } from "../domain/browser-provider.ts";
import type { Config } from "../config.ts";
import type { StartUrlAddressPolicy } from "../domain/pool.ts";
import { poolsCore } from "../domain/pools.ts";
import { resolveProfile } from "../domain/profiles.ts";
import { systemResolver } from "../policy/system-resolver.ts";
import { perConfig, targetPolicy } from "./config.ts";
import { poolStore, profileStore } from "./table.ts";

/** AWS mode holds start URLs to the login engine's address policy; local mode's browsers may open any page. */
export function startUrlAddresses(config: Config): StartUrlAddressPolicy | undefined {
  if (config.DEPLOYMENT_MODE !== "aws") return undefined;
  return { ...targetPolicy(config), resolve: systemResolver };
}

/** The pool core over this deployment's table, reaching browsers through `reachable`. */
export function poolsReaching(config: Config, reachable: BrowserProvider) {
  return poolsCore({
    pools: poolStore(config),
    browsers: reachable,
    resolveProfile: async (org, ref) => (await resolveProfile(profileStore(config), org, ref.id || ref.name || "")).id,
    startUrlAddresses: startUrlAddresses(config),
  });
}

const recordsOnly = "these routes read and write pool records only, and reach no browser";
const refuse = async (): Promise<never> => {
  throw new Error(recordsOnly);
};
/** Fails any call, so a route given `poolRecords` that did reach a browser fails loudly rather than skip it. */
const noBrowserReached: BrowserProvider = { unavailable: recordsOnly, launch: refuse, destroy: refuse, running: refuse, grantLease: refuse, endLease: refuse };

/**
 * For the routes that only write and read pool records (create, get, list). This module leaves the
 * browser provider out, so their bundles carry neither it nor the AWS clients it would bring.
 */
export const poolRecords = perConfig((config) => poolsReaching(config, noBrowserReached));
