import * as z from "zod/mini";
import { healthChecks } from "#shared/composition/health-checks.ts";

const input = z.object({
  org: z.string(),
  connection_id: z.string(),
  generation: z.number().check(z.int(), z.minimum(0)),
  iteration: z.number().check(z.int(), z.minimum(0)),
  execution_id: z.string(),
  execution_started_at: z.string(),
});

/** The workflow's HealthCheck task state. */
export async function handler(payload: unknown) {
  return healthChecks().healthCheck(input.parse(payload));
}
