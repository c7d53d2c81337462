import { poolFiller as poolFillerCore } from "../domain/pool-filler.ts";
import { browsers } from "./browsers.ts";
import { perConfig } from "./config.ts";
import { poolsReaching, startUrlAddresses } from "./pool-records.ts";
import { poolStore } from "./table.ts";

/** For the routes that lease, reset or destroy browsers (the `browsers:lease` grant). */
export const pools = perConfig((config) => poolsReaching(config, browsers(config)));

/** How often the scheduled function runs a pass of the filler in AWS (EventBridge Scheduler's shortest rate). */
export const scheduledFillerIntervalMinutes = 1;

/** Keeps pools at their minimum size: the local runtime's supervisor runs it, and in AWS a scheduled function. */
export const poolFiller = perConfig((config) =>
  poolFillerCore({
    pools: poolStore(config),
    browsers: browsers(config),
    startUrlAddresses: startUrlAddresses(config),
    passIntervalMs: config.DEPLOYMENT_MODE === "aws" ? scheduledFillerIntervalMinutes * 60_000 : undefined,
  }),
);
