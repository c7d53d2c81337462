import { healthChecks } from "#shared/composition/health-checks.ts";
import { loopTaskInput } from "#shared/step-functions/task-inputs.ts";

/** The workflow's HealthCheck task state. */
export async function handler(payload: unknown) {
  return healthChecks().healthCheck(loopTaskInput.parse(payload));
}
