import * as z from "zod/mini";
import { continuation } from "#shared/composition/continuation.ts";

const input = z.object({
  org: z.string(),
  connection_id: z.string(),
  generation: z.number().check(z.int(), z.minimum(0)),
  next_check_at: z.string(),
  execution_id: z.string(),
});

/** The workflow's ContinueAsNew task state. */
export async function handler(payload: unknown) {
  return continuation().continueAsNew(input.parse(payload));
}
