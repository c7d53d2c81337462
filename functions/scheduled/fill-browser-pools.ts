import { poolFiller } from "#shared/composition/pools.ts";

/**
 * One pass of the pool filler, run on a schedule in AWS. The function runs one invocation at a
 * time (reserved concurrency 1), which keeps passes from overlapping as the filler requires.
 */
export async function handler(): Promise<void> {
  await poolFiller().tick();
}
