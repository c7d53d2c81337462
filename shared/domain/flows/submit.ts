import { submissionProblem } from "../../login/submission.ts";
import type { Submission } from "../../login/types.ts";
import type { SecretBox } from "../../secrets/secret-box.ts";
import { existingConnection, type ConnectionStore } from "../connection.ts";
import { BadRequestError, ConflictError } from "../errors.ts";
import type { FlowSignal } from "../workflow.ts";
import { awaitingInputIn, isAwaitingInput, promptOf, sealContext, submitted } from "./state.ts";

export interface SubmitDeps {
  connections: ConnectionStore;
  secrets: SecretBox;
  signal: FlowSignal;
  now?: () => Date;
}

/** The submit route: hands the user's input to the flow step waiting for it. */
export function submitCore(deps: SubmitDeps) {
  const clock = deps.now ?? (() => new Date());

  return {
    async submit(org: string, id: string, submission: Submission): Promise<{ accepted: true }> {
      const given = meaningfulSubmission(submission);
      const connection = await existingConnection(deps.connections, org, id);
      const flowId = connection.flow_id;
      const waiting = isAwaitingInput(connection) && flowId;
      if (!waiting) throw new ConflictError(`auth connection '${id}' has no login flow waiting for input (flow_status ${connection.flow_status ?? "null"}, flow_step ${connection.flow_step ?? "null"})`);
      if (connection.flow_expires_at && Date.parse(connection.flow_expires_at) <= clock().getTime()) {
        throw new ConflictError(`the login flow of auth connection '${id}' has expired: start a new login`);
      }
      const problem = submissionProblem(promptOf(connection), given);
      if (problem) throw new BadRequestError(`submit: ${problem}`, [{ code: "body", message: problem }]);
      const sealed = await deps.secrets.seal(JSON.stringify(given), sealContext(connection, flowId, "submission"));
      const updated = await deps.connections.guardedUpdate(org, id, awaitingInputIn(flowId), submitted(sealed));
      if (!updated) throw new ConflictError(`auth connection '${id}' has no login flow waiting for input: it moved on meanwhile`);
      // No token yet: the waiting step has not registered; it sees the submission and resumes itself.
      if (updated.flow_task_token) await deps.signal.resume(updated.flow_task_token);
      return { accepted: true };
    },
  };
}

/** The submit body without the parts that count as absent; at least one part must remain. */
function meaningfulSubmission(submission: Submission): Submission {
  const given: Submission = {};
  for (const [key, value] of Object.entries(submission) as [keyof Submission, unknown][]) {
    if (value === undefined || value === "") continue;
    if (typeof value === "object" && value !== null && Object.keys(value).length === 0) continue;
    (given as Record<string, unknown>)[key] = value;
  }
  if (Object.keys(given).length === 0) {
    throw new BadRequestError("submit needs at least one of field_values, fields, selected_choice_id, mfa_option_id, sign_in_option_id, sso_button_selector, sso_provider", [
      { code: "body", message: "nothing to submit" },
    ]);
  }
  return given;
}
