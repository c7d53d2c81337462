import { readSubmission } from "../login/submission.ts";
import type { CanonicalField, FlowPrompt, LoginRequirement, Submission } from "../login/types.ts";
import { totpMatches } from "../secrets/totp.ts";
import type { Connection, ConnectionStore, RejectedCredential } from "./connection.ts";
import { hasFailed } from "./flows/state.ts";
import { scaledMs, type WorkflowTiming } from "./workflow.ts";

/**
 * Whether a connection can re-auth, and how: whether a stored credential can replay the recorded
 * login, how it answers a login prompt no person watches, and re-auth that cannot lock an account:
 * a stored secret is sent at most once per re-auth, a rejected credential stops re-auth until a
 * person logs in or the credential changes, and a site's rate limit is waited out (capped) before
 * the next attempt; a second rate limit in a row stops re-auth too, and so does any third re-auth
 * that sent the credential with no check between that found the session.
 */

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

/**
 * A re-auth's answer to a prompt: the submission, and the code boxes that named no channel which it
 * answered from the TOTP secret (StepOptions.totpCodeFields), or what blocks it.
 */
export type PromptAnswer = { submission: Submission; totpCodeFields?: string[] } | { blocked: ReauthBlock };

export function answerPrompt(prompt: FlowPrompt, credential: StoredCredential): PromptAnswer {
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

function fillFields(prompt: FlowPrompt, credential: StoredCredential): PromptAnswer {
  const values = credential.values;
  const fieldValues: Record<string, string> = {};
  const totpCodeFields: string[] = [];
  for (const field of prompt.fields) {
    let value: string | undefined;
    if (field.type === "totp_code") {
      if (!credential.totpCode) return { blocked: "requires_totp_without_secret" };
      value = credential.totpCode();
    } else if (field.type === "code") {
      const channel = channelOf(prompt, field);
      if (channel === "sms" || channel === "call") return { blocked: "requires_sms_code" };
      if (channel === "email") return { blocked: "requires_email_code" };
      // A code box that does not say where its code comes from takes the authenticator's, when there is a secret for it.
      if (channel || !credential.totpCode) return { blocked: "requires_external_action" };
      value = credential.totpCode();
      totpCodeFields.push(field.id);
    } else if (field.type === "identifier") value = values.identifier ?? values[field.ref] ?? values.email ?? values.username;
    else value = values[field.ref] ?? values[field.id];
    if (value !== undefined) fieldValues[field.id] = value;
    else if (field.required) return { blocked: "no_credential" };
  }
  return { submission: { field_values: fieldValues }, ...(totpCodeFields.length > 0 ? { totpCodeFields } : {}) };
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

/** The longest the workflow waits out a site's rate limit: a longer lockout is tried again after this. */
export const maxRateLimitWaitSeconds = 60 * 60;
/** When the site does not say how long: as long as a site's own lockout is likely to be, without leaving the connection out for hours. */
export const defaultRateLimitWaitSeconds = 30 * 60;
/** A `Retry-After: 0` must not turn into an immediate second attempt. */
export const minRateLimitWaitSeconds = 60;

/** When the workflow may try again after a rate-limit answer, as this deployment runs waits (scaled locally). */
export function rateLimitRetryAt(now: Date, retryAfterSeconds: number | null | undefined, timing: Pick<WorkflowTiming, "timeScale">): string {
  const seconds = Math.min(Math.max(retryAfterSeconds ?? defaultRateLimitWaitSeconds, minRateLimitWaitSeconds), maxRateLimitWaitSeconds);
  return new Date(now.getTime() + scaledMs(seconds, timing)).toISOString();
}

/** The channel the page named for a code field, or null when it named none. */
function channelOf(prompt: FlowPrompt, field: CanonicalField) {
  return prompt.discovered_fields.find((discovered) => discovered.selector === field.observed_selector)?.linked_mfa_type ?? null;
}

/** The values `submission` gives the code boxes of `prompt` that do not say their channel, by field id. */
export function unnamedCodeValues(prompt: FlowPrompt, submission: Submission): Record<string, string> {
  const intent = readSubmission(prompt, submission);
  if ("problem" in intent || intent.kind === "nothing") return {};
  return Object.fromEntries(
    prompt.fields.flatMap((field) => {
      const value = intent.values[field.id];
      return field.type === "code" && channelOf(prompt, field) === null && value ? [[field.id, value]] : [];
    }),
  );
}

/**
 * Of those code values, the fields whose value is the current code of `totpSecret` (a person typed
 * what their authenticator shows for the linked credential): TOTP codes.
 */
export function totpCodeFields(codes: Record<string, string>, totpSecret: string, at = new Date()): string[] {
  return Object.entries(codes)
    .filter(([, value]) => totpMatches(totpSecret, value, at))
    .map(([id]) => id);
}

const secretFieldTypes: ReadonlySet<CanonicalField["type"]> = new Set(["password", "totp_code"]);

/**
 * The secret kinds a prompt asks for: a re-auth answers each once, as a second ask means the site
 * refused it. A code box that names no channel asks for the TOTP code a re-auth would answer it with.
 */
export function secretsAsked(prompt: FlowPrompt): string[] {
  return prompt.fields.flatMap((field) => {
    if (secretFieldTypes.has(field.type)) return [field.type];
    return field.type === "code" && channelOf(prompt, field) === null ? ["totp_code"] : [];
  });
}

/**
 * The record's change when re-auth must stop sending the stored credential (the site rejected it, kept
 * limiting it, or took it too often with no session to show): a credential is linked, but only a
 * person can log in or change it now.
 */
export function reauthStopped(connection: Connection, credentialId: string): Partial<Connection> {
  return {
    can_reauth: false,
    can_reauth_reason: "requires_external_action",
    reauth_rejected_credential: { credential_id: credentialId, can_reauth_reason: connection.can_reauth_reason },
  };
}

/**
 * How a re-auth the site rate-limited ends. The first waits until `retryAt`; when the re-auth before
 * it was rate-limited too, with no login between, the site still refuses after its own wait, so
 * re-auth stops as on a rejection rather than resubmit after every wait.
 */
export function reauthRateLimited(
  connection: Connection,
  limit: { credentialId: string; message: string; retryAfterSeconds: number | null },
  now: Date,
  timing: Pick<WorkflowTiming, "timeScale">,
): { retryAt: string | null; message: string; changes: Partial<Connection> } {
  const limitedBefore = connection.flow_type === "REAUTH" && hasFailed(connection) && connection.error_code === "rate_limited";
  if (limitedBefore) {
    return { retryAt: null, message: `${limit.message}; re-auth stops: the site limited it again after its wait`, changes: reauthStopped(connection, limit.credentialId) };
  }
  const retryAt = rateLimitRetryAt(now, limit.retryAfterSeconds, timing);
  return { retryAt, message: `${limit.message}; re-auth waits until ${retryAt}`, changes: {} };
}

/**
 * Re-auths that may send the stored credential with no health check between them seeing the session stand.
 * Whatever else goes wrong after the credential is sent (an error page, no session cookie, a session
 * the next check finds gone), each of those re-auths is one more attempt the site counts.
 */
export const maxUnverifiedReauths = 3;

/**
 * The record's change after a re-auth that sent the stored credential: one more unverified re-auth,
 * and at the last one allowed, re-auth stops as on a rejection. `stopped` says whether it did.
 */
export function credentialSent(connection: Connection, credentialId: string): { changes: Partial<Connection>; stopped: boolean } {
  const unverified = (connection.unverified_reauths ?? 0) + 1;
  if (unverified < maxUnverifiedReauths) return { changes: { unverified_reauths: unverified }, stopped: false };
  return { changes: { unverified_reauths: unverified, ...reauthStopped(connection, credentialId) }, stopped: true };
}

/** A check saw the session stand, or a person logged in: the re-auths before it are no longer in question. */
export function sessionStood(connection: Connection): Partial<Connection> {
  return connection.unverified_reauths ? { unverified_reauths: 0 } : {};
}

/** Re-auth may try again with a changed credential: back to the reason the last login gave. */
export function reauthRestored(rejected: RejectedCredential): Partial<Connection> {
  return { can_reauth: true, can_reauth_reason: rejected.can_reauth_reason, reauth_rejected_credential: null, unverified_reauths: 0 };
}

/** After a stored credential changed, every connection whose re-auth it had stopped may re-auth again. */
export async function credentialChanged(connections: Pick<ConnectionStore, "list" | "guardedUpdate">, org: string, credentialId: string): Promise<void> {
  const stopped = await connections.list({
    org,
    scope: { kind: "org" },
    offset: 0,
    limit: Number.POSITIVE_INFINITY,
    matches: (connection) => connection.reauth_rejected_credential?.credential_id === credentialId,
  });
  for (const connection of stopped.items) {
    await connections.guardedUpdate(org, connection.id, { rejectedCredential: credentialId }, reauthRestored(connection.reauth_rejected_credential!));
  }
}
