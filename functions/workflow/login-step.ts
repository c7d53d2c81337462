import { loginSteps } from "#shared/composition/login-flows.ts";
import { flowTaskInput } from "#shared/step-functions/task-inputs.ts";

/** The workflow's LoginStep task state: discovery, or the step after the user's input. */
export async function handler(payload: unknown) {
  return loginSteps().loginStep(flowTaskInput.parse(payload));
}
