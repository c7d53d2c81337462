import { newId } from "../ids.ts";
import type { LoginEngineKind, SessionEvidenceBasis } from "../login/types.ts";
import { NotFoundError } from "./errors.ts";
import type { FlowGuard, FlowState } from "./flows/state.ts";
import type { Page } from "./list-page.ts";
import type { Profile } from "./profile.ts";

export const connectionStatuses = ["AUTHENTICATED", "NEEDS_AUTH"] as const;

export const browserTelemetryCategories = [
  "console",
  "page",
  "interaction",
  "network",
  "control",
  "connection",
  "system",
  "screenshot",
  "captcha",
] as const;

export interface CredentialRef {
  name: string | null;
  provider: string | null;
  path: string | null;
  auto: boolean;
}

export interface BrowserTelemetry {
  enabled?: boolean;
  browser?: Partial<Record<(typeof browserTelemetryCategories)[number], { enabled?: boolean }>>;
}

/** What a user sets on create and may change with PATCH. */
export interface ConnectionSettings {
  login_url: string | null;
  allowed_domains: string[];
  credential: CredentialRef | null;
  proxy_id: string | null;
  health_checks: boolean;
  /** Seconds. */
  health_check_interval: number;
  auto_reauth: boolean;
  save_credentials: boolean;
  record_session: boolean;
  browser_telemetry: BrowserTelemetry | null;
}

/**
 * The running flow's bookkeeping, never part of the resource. Engine state and submitted values
 * are sealed with the secret box: they hold session cookies and what the user typed.
 */
export interface FlowInternals {
  flow_id?: string | null;
  flow_started_at?: string | null;
  flow_execution_arn?: string | null;
  /** The `.waitForTaskToken` token of the step waiting for input; submit answers it. */
  flow_task_token?: string | null;
  flow_engine_state?: string | null;
  flow_submission?: string | null;
  /** What the last successful login needed, so re-auth knows whether a credential can replay it. */
  login_requirements?: string[] | null;
  /** The engine the last successful login ran in; its health checks and re-auths use the same one. */
  login_engine?: LoginEngineKind | null;
  /** What the last successful login learnt a signed-in page shows, sealed (domain/sealed-evidence.ts). */
  session_evidence_sealed?: string | null;
  /** Set while re-auth is stopped because the site rejected the stored credential or kept limiting it (reauth.ts). */
  reauth_rejected_credential?: RejectedCredential | null;
  /** Re-auths that sent the stored credential since a check last found the session or a person logged in (reauth.ts). */
  unverified_reauths?: number;
  /** Health checks in a row that could not tell whether the session works (check-engine.ts). */
  inconclusive_checks?: number;
}

/** Why re-auth stopped on the stored credential, and what `can_reauth_reason` was before, to restore it. */
export interface RejectedCredential {
  credential_id: string;
  can_reauth_reason: string | null;
}

export interface Connection extends ConnectionSettings, FlowState, FlowInternals {
  id: string;
  org: string;
  profile_id: string;
  profile_name: string;
  domain: string;
  created_at: string;
  updated_at: string;
  version: number;
  status: (typeof connectionStatuses)[number];
  last_auth_check_at: string | null;
  last_auth_at: string | null;
  can_reauth: boolean;
  can_reauth_reason: string | null;
  post_login_url: string | null;
  /**
   * Whether the health checks can tell `post_login_url` signed in from signed out, as the last
   * successful login found; absent on a record whose last login came before evidence was learnt.
   */
  session_evidence?: SessionEvidenceBasis | null;
  /** The live workflow execution; delete stops exactly this one. */
  execution_arn: string | null;
  workflow_generation: number;
  /**
   * Set by the create's transaction and removed once the first execution started, so whatever next
   * touches the record can tell that a failed or interrupted create left it without its workflow.
   * A record may lack it: absent, like removed, means the first execution started.
   */
  workflow_start_pending?: boolean;
}

export const timelineEventTypes = ["login", "reauth", "health_check"] as const;

export interface TimelineEvent {
  id: string;
  type: (typeof timelineEventTypes)[number];
  status: string;
  timestamp: string;
  previous_status?: string;
  error_code?: string;
  error_message?: string;
  /** The flow's trace, when the connection records sessions: `GET /auth/connections/{id}/replays/{replay_id}`. */
  replay_id?: string;
  /** A health check's: the engine that asked the site (`http`: the served page; `browser`: the page as its script draws it). */
  checked_with?: LoginEngineKind;
  /** Why the check asked another engine than its usual one. */
  note?: string;
}

const dayMs = 24 * 60 * 60 * 1000;

/** A timeline event of `connection` at `at`, kept `retentionDays` (DynamoDB's TTL removes it after). */
export function timelineRecord(
  connection: Pick<Connection, "status">,
  event: {
    type: TimelineEvent["type"];
    status: string;
    error?: { code: string; message: string };
    replayId?: string | null;
    checkedWith?: LoginEngineKind;
    note?: string | null;
  },
  at: Date,
  retentionDays: number,
): TimelineRecord {
  return {
    event: {
      id: newId("ev"),
      type: event.type,
      status: event.status,
      timestamp: at.toISOString(),
      previous_status: connection.status,
      ...(event.error ? { error_code: event.error.code, error_message: event.error.message } : {}),
      ...(event.replayId ? { replay_id: event.replayId } : {}),
      ...(event.checkedWith ? { checked_with: event.checkedWith } : {}),
      ...(event.note ? { note: event.note } : {}),
    },
    expiresAt: Math.floor((at.getTime() + retentionDays * dayMs) / 1000),
  };
}

export async function existingConnection(store: Pick<ConnectionStore, "get">, org: string, id: string): Promise<Connection> {
  const connection = await store.get(org, id);
  if (!connection) throw new NotFoundError(`auth connection '${id}' not found`);
  return connection;
}

export const defaultSettings: ConnectionSettings = {
  login_url: null,
  allowed_domains: [],
  credential: null,
  proxy_id: null,
  health_checks: true,
  health_check_interval: 3600,
  auto_reauth: true,
  save_credentials: true,
  record_session: false,
  browser_telemetry: null,
};

/** The wire shape: every field of the spec's table, in its order, null where there is no value. */
export function toConnectionResource(connection: Connection) {
  return {
    id: connection.id,
    profile_name: connection.profile_name,
    domain: connection.domain,
    status: connection.status,
    last_auth_check_at: connection.last_auth_check_at,
    last_auth_at: connection.last_auth_at,
    credential: connection.credential,
    can_reauth: connection.can_reauth,
    can_reauth_reason: connection.can_reauth_reason,
    proxy_id: connection.proxy_id,
    allowed_domains: connection.allowed_domains,
    login_url: connection.login_url,
    post_login_url: connection.post_login_url,
    session_evidence: connection.session_evidence ?? null,
    flow_status: connection.flow_status,
    flow_step: connection.flow_step,
    flow_type: connection.flow_type,
    flow_expires_at: connection.flow_expires_at,
    fields: connection.fields,
    choices: connection.choices,
    discovered_fields: connection.discovered_fields,
    mfa_options: connection.mfa_options,
    sign_in_options: connection.sign_in_options,
    pending_sso_buttons: connection.pending_sso_buttons,
    external_action_message: connection.external_action_message,
    website_error: connection.website_error,
    sso_provider: connection.sso_provider,
    error_message: connection.error_message,
    error_code: connection.error_code,
    hosted_url: connection.hosted_url,
    live_view_url: connection.live_view_url,
    browser_session_id: connection.browser_session_id,
    health_check_interval: connection.health_check_interval,
    health_checks: connection.health_checks,
    auto_reauth: connection.auto_reauth,
    save_credentials: connection.save_credentials,
    record_session: connection.record_session,
    browser_telemetry: connection.browser_telemetry,
  };
}

export type ConnectionResource = ReturnType<typeof toConnectionResource>;

/** Which index a list reads; the core picks it from the filters given. */
export type ConnectionListScope =
  | { kind: "org" }
  | { kind: "profile"; profileId: string }
  | { kind: "domain"; domain: string }
  | { kind: "profileAndDomain"; profileId: string; domain: string };

export type InsertOutcome =
  | { outcome: "created" }
  | { outcome: "duplicate"; existingId: string }
  /**
   * Nothing was written because a concurrent change won: the existing profile was deleted, the new
   * profile's name was taken, or the pair's guard vanished between the failure and its read.
   * Reading the profile again and retrying settles it.
   */
  | { outcome: "raced" };

/** A timeline event and when DynamoDB's TTL may remove it (epoch seconds). */
export interface TimelineRecord {
  event: TimelineEvent;
  expiresAt: number;
}

/** What must still hold for a flow or loop update to apply. */
export type RecordGuard =
  /** The flow is still the record's flow and in progress (and, when given, at that step). */
  | FlowGuard
  /** The execution is still the record's live health-check loop. */
  | { executionArn: string }
  /** Re-auth is still stopped by the rejection of that credential (by id). */
  | { rejectedCredential: string }
  /** The record still holds that sealed session evidence: no login replaced it. */
  | { sealedEvidence: string };

export interface ConnectionStore {
  /**
   * Writes the connection, its (org, profile, domain) guard and its profile's side in one
   * transaction, or nothing: `newProfile` (whose id is the connection's `profile_id`) is created
   * with its name, otherwise the existing profile counts the connection.
   */
  insert(connection: Connection, newProfile?: Profile): Promise<InsertOutcome>;
  get(org: string, id: string): Promise<Connection | undefined>;
  list(request: {
    org: string;
    scope: ConnectionListScope;
    offset: number;
    limit: number;
    matches?: (connection: Connection) => boolean;
  }): Promise<Page<Connection>>;
  /** Sets only the given settings; undefined when the connection does not exist. */
  updateSettings(org: string, id: string, changes: Partial<ConnectionSettings>, now: string): Promise<Connection | undefined>;
  /** Clears `workflow_start_pending`, only if the record still points at `executionArn`. */
  markWorkflowStarted(org: string, id: string, executionArn: string): Promise<boolean>;
  /** Points the record at a new execution (a started one), only if it still points at `expectedArn`. */
  swapExecution(org: string, id: string, expectedArn: string, next: { arn: string; generation: number }): Promise<boolean>;
  /**
   * Starts a flow unless one is live (in progress and not past `flow_expires_at`): `started` false
   * returns the record with the live flow. Undefined when the connection does not exist.
   */
  beginFlow(org: string, id: string, flow: Partial<Connection>, now: string): Promise<{ started: boolean; connection: Connection } | undefined>;
  /** Applies `changes` only while `guard` holds: the record after, or undefined when it did not hold. */
  guardedUpdate(org: string, id: string, guard: RecordGuard, changes: Partial<Connection>): Promise<Connection | undefined>;
  /** Applies `changes` and writes the timeline event in one transaction, only while `guard` holds. */
  recordOutcome(org: string, id: string, guard: RecordGuard, changes: Partial<Connection>, timeline: TimelineRecord): Promise<boolean>;
  timeline(request: {
    org: string;
    id: string;
    offset: number;
    limit: number;
    matches?: (event: TimelineEvent) => boolean;
  }): Promise<Page<TimelineEvent>>;
  /** Follows a profile rename into the connections that show its name. */
  renameProfile(org: string, profileId: string, name: string): Promise<void>;
  /**
   * Removes the record, its guard and its timeline, only while the record still points at
   * `executionArn`; "moved" means a new execution took over and must be stopped first.
   */
  remove(org: string, id: string, executionArn: string | null): Promise<"removed" | "gone" | "moved">;
}
