import { inputWaits } from "#shared/composition/flow-waits.ts";
import { awaitInputTaskInput } from "#shared/step-functions/task-inputs.ts";

/** The workflow's AwaitInput task state (`.waitForTaskToken`): registers the token submit answers. */
export async function handler(payload: unknown) {
  return inputWaits().awaitInput(awaitInputTaskInput.parse(payload));
}
