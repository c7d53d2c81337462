import { setTimeout as sleep } from "node:timers/promises";
import type { PoolFiller } from "#shared/domain/pool-filler.ts";
import { log } from "#shared/log.ts";

export interface PoolSupervisor {
  /** Ends the passes, then every browser: a stopped stack leaves no Chromium behind. */
  stop(): Promise<void>;
}

/**
 * Runs the filler's passes back to back, `intervalMs` apart, for as long as the local stack runs.
 * The first pass is the reconcile after a restart: records of browsers that died with the previous
 * process go, browsers it left running with no record are ended, and the directories of launches
 * it was killed in the middle of are removed.
 */
export function startPoolSupervisor(filler: PoolFiller, intervalMs = 250): PoolSupervisor {
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      await filler.tick().catch((error: unknown) =>
        log.warn("pool filler pass failed", { error: error instanceof Error ? error.message : String(error) }),
      );
      if (!stopping) await sleep(intervalMs);
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      await filler.stopAll();
    },
  };
}
