import type { Context } from "aws-lambda";
import { poolFiller } from "#shared/composition/pools.ts";
import { log } from "#shared/log.ts";

/**
 * One pass of the pool filler, run on a schedule in AWS. Passes must not overlap, and a run may
 * start while the last one still launches: the pass is claimed in the table for as long as this
 * invocation may run, and a run that finds it claimed does nothing.
 */
export async function handler(_event: unknown, context: Context): Promise<void> {
  const passed = await poolFiller().tickAlone(context.awsRequestId, context.getRemainingTimeInMillis());
  if (!passed) log.info("pool filler pass skipped: the previous pass is still running");
}
