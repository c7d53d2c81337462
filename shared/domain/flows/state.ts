import type { CanonicalField, Choice, DiscoveredField, FlowPrompt, MfaOption, PendingSsoButton, SignInOption } from "../../login/types.ts";

/**
 * The login flow's states as the connection record holds them. Every change of a flow's status or
 * step is a transition named here, and every check of one reads a guard or a predicate from here:
 * no other file writes or compares a flow_status or flow_step value (test/unit/flow-literals.test.ts).
 */

export const flowStatuses = ["IN_PROGRESS", "SUCCESS", "FAILED", "EXPIRED", "CANCELED"] as const;
export const flowSteps = ["DISCOVERING", "AWAITING_INPUT", "AWAITING_EXTERNAL_ACTION", "SUBMITTING", "COMPLETED"] as const;
export const flowTypes = ["LOGIN", "REAUTH"] as const;

export type FlowStatus = (typeof flowStatuses)[number];
export type FlowStep = (typeof flowSteps)[number];
export type FlowType = (typeof flowTypes)[number];

/** The state of the most recent login flow; every member is null before the first flow. */
export interface FlowState {
  flow_status: FlowStatus | null;
  flow_step: FlowStep | null;
  flow_type: FlowType | null;
  flow_expires_at: string | null;
  fields: CanonicalField[] | null;
  choices: Choice[] | null;
  discovered_fields: DiscoveredField[] | null;
  mfa_options: MfaOption[] | null;
  sign_in_options: SignInOption[] | null;
  pending_sso_buttons: PendingSsoButton[] | null;
  external_action_message: string | null;
  website_error: string | null;
  sso_provider: string | null;
  error_message: string | null;
  error_code: string | null;
  hosted_url: string | null;
  live_view_url: string | null;
  browser_session_id: string | null;
}

export const noFlow: FlowState = {
  flow_status: null,
  flow_step: null,
  flow_type: null,
  flow_expires_at: null,
  fields: null,
  choices: null,
  discovered_fields: null,
  mfa_options: null,
  sign_in_options: null,
  pending_sso_buttons: null,
  external_action_message: null,
  website_error: null,
  sso_provider: null,
  error_message: null,
  error_code: null,
  hosted_url: null,
  live_view_url: null,
  browser_session_id: null,
};

/** What a flow holds while it runs (sealed values, its wait, its live browser); dropped when it ends, so no session or typed value outlives it. */
const flowSecretsCleared = { flow_engine_state: null, flow_submission: null, flow_task_token: null, browser_session_id: null } as const;

/** The status a flow has while it runs: the store's flow guards hold only while the record has it. */
export const inProgress: FlowStatus = "IN_PROGRESS";

/** What a flow update needs still to hold: the flow is the record's flow and in progress, and, when given, at that step. */
export interface FlowGuard {
  flowId: string;
  step?: FlowStep;
}

/** The guard of any update a running flow makes. */
export function inFlow(flowId: string): FlowGuard {
  return { flowId };
}

/** The guard of what only a flow waiting for input may do: take a submission, register its wait. */
export function awaitingInputIn(flowId: string): FlowGuard {
  return { flowId, step: "AWAITING_INPUT" };
}

type Status = { flow_status: FlowStatus | null };
type Position = Status & { flow_step: FlowStep | null };

export function isInProgress(flow: Status): boolean {
  return flow.flow_status === inProgress;
}

export function isAwaitingInput(flow: Position): boolean {
  return isInProgress(flow) && flow.flow_step === "AWAITING_INPUT";
}

/** A submission came for the step that waited for it. */
export function isSubmitted(flow: Position): boolean {
  return flow.flow_step === "SUBMITTING";
}

export function hasFailed(flow: Status): boolean {
  return flow.flow_status === "FAILED";
}

/** How a flow in progress looks once its connection is deleted: canceled, at whatever step it was. */
export function seenCanceled<T extends Status>(flow: T): T {
  return { ...flow, flow_status: "CANCELED" };
}

/** A login flow begins: discovery comes first. */
export function begun(flow: { id: string; startedAt: string; expiresAt: string; executionArn: string }) {
  return {
    ...noFlow,
    ...flowSecretsCleared,
    flow_status: "IN_PROGRESS" as const,
    flow_step: "DISCOVERING" as const,
    flow_type: "LOGIN" as const,
    flow_expires_at: flow.expiresAt,
    flow_id: flow.id,
    flow_started_at: flow.startedAt,
    flow_execution_arn: flow.executionArn,
  };
}

/**
 * A step asks the user: its prompt, the site's error when it refused the last answer, the step's
 * state (sealed), and the live browser that holds the page, if one does.
 */
export function awaitingInput(step: { prompt: FlowPrompt; websiteError: string | null; expiresAt: string; sealedState: string; browserSessionId: string | null }) {
  return {
    ...promptColumns(step.prompt),
    flow_step: "AWAITING_INPUT" as const,
    website_error: step.websiteError,
    flow_expires_at: step.expiresAt,
    flow_engine_state: step.sealedState,
    flow_submission: null,
    flow_task_token: null,
    browser_session_id: step.browserSessionId,
  };
}

/** The user answered (sealed): the step waiting for it goes on. */
export function submitted(sealedSubmission: string) {
  return { flow_submission: sealedSubmission, flow_step: "SUBMITTING" as const, website_error: null };
}

export function succeeded() {
  return { ...promptColumns(null), ...flowSecretsCleared, flow_status: "SUCCESS" as const, flow_step: "COMPLETED" as const };
}

/** A flow's end other than success, on the record; its timeline event repeats the status and the error. */
export type FlowEnd = ReturnType<typeof failed>;

export function failed(code: string, message: string) {
  return unsuccessful("FAILED", code, message);
}

export function expired() {
  return unsuccessful("EXPIRED", "flow_expired", "the login flow expired waiting for input");
}

function unsuccessful(status: "FAILED" | "EXPIRED", code: string, message: string) {
  return {
    ...promptColumns(null),
    ...flowSecretsCleared,
    flow_status: status,
    flow_step: "COMPLETED" as const,
    error_code: code,
    error_message: message,
  };
}

/** Deleted mid-flow: it ends CANCELED, which is what an events stream sees last. */
export function canceled() {
  return { ...flowSecretsCleared, flow_status: "CANCELED" as const, flow_step: "COMPLETED" as const };
}

/** The prompt columns of the resource, empty between steps. */
function promptColumns(prompt: FlowPrompt | null) {
  return {
    discovered_fields: prompt ? prompt.discovered_fields : null,
    fields: prompt ? prompt.fields : null,
    choices: prompt ? prompt.choices : null,
    mfa_options: prompt ? prompt.mfa_options : null,
    sign_in_options: prompt ? prompt.sign_in_options : null,
    pending_sso_buttons: prompt ? prompt.pending_sso_buttons : null,
    external_action_message: prompt ? prompt.external_action_message : null,
  };
}

/** The prompt the flow is waiting on, as the record shows it. */
export function promptOf(flow: FlowState): FlowPrompt {
  return {
    discovered_fields: flow.discovered_fields ?? [],
    fields: flow.fields ?? [],
    choices: flow.choices ?? [],
    mfa_options: flow.mfa_options ?? [],
    sign_in_options: flow.sign_in_options ?? [],
    pending_sso_buttons: flow.pending_sso_buttons ?? [],
    external_action_message: flow.external_action_message,
  };
}

/** What binds a flow's sealed values to it: the org, the connection, the flow and what the value is. */
export function sealContext(connection: { org: string; id: string }, flowId: string, purpose: "engine_state" | "submission") {
  return { org: connection.org, connection: connection.id, flow: flowId, purpose };
}
