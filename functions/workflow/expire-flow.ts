import { flowTasks } from "#shared/composition/login-flows.ts";
import { flowTaskInput } from "#shared/workflow/task-inputs.ts";

/** The workflow's ExpireFlow task state: no input came in time. */
export async function handler(payload: unknown) {
  return flowTasks().expireFlow(flowTaskInput.parse(payload));
}
