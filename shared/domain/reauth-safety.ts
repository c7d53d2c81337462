import type { CanonicalField, FlowPrompt } from "../login/types.ts";
import type { Connection, ConnectionStore } from "./connection.ts";
import { hasFailed } from "./flows/state.ts";
import { scaledMs, type WorkflowTiming } from "./workflow.ts";

/**
 * Re-auth that cannot lock an account: a stored secret is sent at most once per re-auth, a rejected
 * credential stops re-auth until a person logs in or the credential changes, and a site's rate limit
 * is waited out (capped) before the next attempt; a second rate limit in a row stops re-auth too, and
 * so does any third re-auth that sent the credential with no check between that found the session.
 */

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

const secretFieldTypes: ReadonlySet<CanonicalField["type"]> = new Set(["password", "totp_code"]);

/** The secret kinds a prompt asks for: a re-auth answers each once, as a second ask means the site refused it. */
export function secretsAsked(prompt: FlowPrompt): string[] {
  return prompt.fields.filter((field) => secretFieldTypes.has(field.type)).map((field) => field.type);
}

/** Why re-auth stopped on the stored credential, and what `can_reauth_reason` was before, to restore it. */
export interface RejectedCredential {
  credential_id: string;
  can_reauth_reason: string | null;
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
