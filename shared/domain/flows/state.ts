import type { FlowPrompt } from "../../login/types.ts";
import type { Connection } from "../connection.ts";

export function sealContext(connection: Connection, flowId: string, purpose: "engine_state" | "submission") {
  return { org: connection.org, connection: connection.id, flow: flowId, purpose };
}

/** The prompt fields of the resource, empty between steps. */
export function promptFields(prompt: FlowPrompt | null) {
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
export function promptOf(connection: Connection): FlowPrompt {
  return {
    discovered_fields: (connection.discovered_fields ?? []) as FlowPrompt["discovered_fields"],
    fields: (connection.fields ?? []) as FlowPrompt["fields"],
    choices: (connection.choices ?? []) as FlowPrompt["choices"],
    mfa_options: (connection.mfa_options ?? []) as FlowPrompt["mfa_options"],
    sign_in_options: (connection.sign_in_options ?? []) as FlowPrompt["sign_in_options"],
    pending_sso_buttons: (connection.pending_sso_buttons ?? []) as FlowPrompt["pending_sso_buttons"],
    external_action_message: connection.external_action_message,
  };
}
