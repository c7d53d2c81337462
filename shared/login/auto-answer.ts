import type { FlowPrompt, LoginRequirement, Submission } from "./types.ts";

/** Answering a login prompt from a stored credential, for a re-auth no person watches. */

export type ReauthBlock = "requires_sms_code" | "requires_email_code" | "requires_totp_without_secret" | "requires_external_action" | "no_credential";

export type CanReauthReason =
  | "has_credential"
  | "external_credential"
  | "requirements_satisfiable"
  | "no_prior_successful_login"
  | ReauthBlock;

export interface StoredCredential {
  /** Durable values by credential ref (`identifier`, `password`, text fields' refs, optionally `account`). */
  values: Record<string, string>;
  /** The current TOTP code, when the credential holds a TOTP secret. */
  totpCode: (() => string) | null;
  /** The identity provider this credential signs in through, when it is an SSO login. */
  ssoProvider?: string | null;
}

export function answerPrompt(prompt: FlowPrompt, credential: StoredCredential): { submission: Submission } | { blocked: ReauthBlock } {
  const ssoProvider = credential.ssoProvider?.toLowerCase();
  if (ssoProvider && prompt.pending_sso_buttons.some((button) => button.provider === ssoProvider)) {
    return { submission: { sso_provider: ssoProvider } };
  }
  if (prompt.fields.length > 0) return fillFields(prompt, credential);
  if (prompt.mfa_options.length > 0) return pickMfaMethod(prompt, credential);
  if (prompt.sign_in_options.length > 0) {
    const wanted = (credential.values.account ?? credential.values.identifier ?? "").toLowerCase();
    const matching = prompt.sign_in_options.find(
      (option) => wanted !== "" && [option.id, option.label, option.description ?? ""].some((text) => text.toLowerCase().includes(wanted)),
    );
    return { submission: { sign_in_option_id: (matching ?? prompt.sign_in_options[0]!).id } };
  }
  if (prompt.pending_sso_buttons.length > 0) return { blocked: "no_credential" };
  return { blocked: "requires_external_action" };
}

function fillFields(prompt: FlowPrompt, credential: StoredCredential): { submission: Submission } | { blocked: ReauthBlock } {
  const values = credential.values;
  const fieldValues: Record<string, string> = {};
  for (const field of prompt.fields) {
    let value: string | undefined;
    if (field.type === "totp_code") {
      if (!credential.totpCode) return { blocked: "requires_totp_without_secret" };
      value = credential.totpCode();
    } else if (field.type === "code") {
      const channel = prompt.discovered_fields.find((discovered) => discovered.selector === field.observed_selector)?.linked_mfa_type;
      if (channel === "sms" || channel === "call") return { blocked: "requires_sms_code" };
      if (channel === "email") return { blocked: "requires_email_code" };
      return { blocked: "requires_external_action" };
    } else if (field.type === "identifier") value = values.identifier ?? values[field.ref] ?? values.email ?? values.username;
    else value = values[field.ref] ?? values[field.id];
    if (value !== undefined) fieldValues[field.id] = value;
    else if (field.required) return { blocked: "no_credential" };
  }
  return { submission: { field_values: fieldValues } };
}

/** The authenticator app when there is a secret for it; otherwise the reason no method can be answered. */
function pickMfaMethod(prompt: FlowPrompt, credential: StoredCredential): { submission: Submission } | { blocked: ReauthBlock } {
  const offered = new Set(prompt.mfa_options.map((option) => option.type));
  if (offered.has("totp") && credential.totpCode) return { submission: { mfa_option_id: "totp" } };
  if (offered.has("password") && credential.values.password) return { submission: { mfa_option_id: "password" } };
  if (offered.has("totp")) return { blocked: "requires_totp_without_secret" };
  if (offered.has("sms") || offered.has("call")) return { blocked: "requires_sms_code" };
  if (offered.has("email")) return { blocked: "requires_email_code" };
  return { blocked: "requires_external_action" };
}

/**
 * `can_reauth_reason` for a connection: whether a stored credential can replay the recorded login
 * (`requirements` is null before any successful login).
 */
export function canReauthReason(
  requirements: LoginRequirement[] | null,
  hasCredential: boolean,
  hasTotpSecret: boolean,
  externalCredential = false,
): CanReauthReason {
  if (requirements === null) return "no_prior_successful_login";
  if (!hasCredential && !externalCredential) return "no_credential";
  if (requirements.includes("sms_code")) return "requires_sms_code";
  if (requirements.includes("email_code")) return "requires_email_code";
  if (requirements.includes("push") || requirements.includes("external")) return "requires_external_action";
  if (requirements.includes("totp_code") && !hasTotpSecret) return "requires_totp_without_secret";
  if (externalCredential) return "external_credential";
  if (requirements.some((requirement) => requirement !== "identifier" && requirement !== "password")) return "requirements_satisfiable";
  return "has_credential";
}

export function reauthPossible(reason: CanReauthReason): boolean {
  return reason === "has_credential" || reason === "external_credential" || reason === "requirements_satisfiable";
}
