import { flowExpiry } from "#shared/composition/flow-expiry.ts";
import { flowTaskInput } from "#shared/step-functions/task-inputs.ts";

/** The workflow's ExpireFlow task state: no input came in time. */
export async function handler(payload: unknown) {
  return flowExpiry().expireFlow(flowTaskInput.parse(payload));
}
