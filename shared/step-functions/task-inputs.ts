import * as z from "zod/mini";

/** What the loop's task states are handed (the Payload blocks of the ASL file). */
export const loopTaskInput = z.object({
  org: z.string(),
  connection_id: z.string(),
  generation: z.number().check(z.int(), z.minimum(0)),
  iteration: z.number().check(z.int(), z.minimum(0)),
  execution_id: z.string(),
  execution_started_at: z.string(),
});

export const reauthTaskInput = z.extend(loopTaskInput, { next_check_at: z.string() });

/** What a login flow's task states are handed. */
export const flowTaskInput = z.object({ org: z.string(), connection_id: z.string(), flow_id: z.string() });

export const awaitInputTaskInput = z.extend(flowTaskInput, { task_token: z.string() });
