import { flowTasks } from "#shared/composition/login-flows.ts";
import { awaitInputTaskInput } from "#shared/workflow/task-inputs.ts";

/** The workflow's AwaitInput task state (`.waitForTaskToken`): registers the token submit answers. */
export async function handler(payload: unknown) {
  return flowTasks().awaitInput(awaitInputTaskInput.parse(payload));
}
