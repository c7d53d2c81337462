import { reauth } from "#shared/composition/login-flows.ts";
import { reauthTaskInput } from "#shared/step-functions/task-inputs.ts";

/** The workflow's Reauth task state: a health check found the session logged out. */
export async function handler(payload: unknown) {
  return reauth().reauth(reauthTaskInput.parse(payload));
}
