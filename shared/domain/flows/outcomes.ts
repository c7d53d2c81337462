import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { noSessionIfTooLarge } from "../../archive/errors.ts";
import { log } from "../../log.ts";
import { canReauthReason, reauthPossible } from "../../login/auto-answer.ts";
import { credentialFitsHost } from "../../login/scope.ts";
import { submissionProblem } from "../../login/submission.ts";
import type { EngineState, FlowPrompt, LoginEngine, LoginTarget, StepOutcome, Submission } from "../../login/types.ts";
import type { SecretBox } from "../../secrets/secret-box.ts";
import type { FlowExecutionInput } from "../../workflow/definition.ts";
import {
  existingConnection,
  flowSecretsCleared,
  noFlow,
  timelineRecord,
  type Connection,
  type ConnectionStore,
  type RecordGuard,
  type TimelineEvent,
  type TimelineRecord,
} from "../connection.ts";
import { BadRequestError, ConflictError, NotFoundError } from "../errors.ts";
import type { ProfileSessions } from "../profile-sessions.ts";
import { evidenceFields, openEvidence } from "../session-evidence.ts";
import { scaledMs, startFirstExecution, type WorkflowEngine, type WorkflowTiming } from "../workflow.ts";

/** How long a flow may wait for input, and live in all (api.md, Flow rules); scaled locally. */
export const inputTimeoutSeconds = 10 * 60;
export const flowTimeoutSeconds = 20 * 60;
/** How often a step holding a live browser reads the record for the next submission, by default. */
export const submissionPollMs = 100;
/** A browser flow's one invocation holds its browser throughout, and a Lambda runs 15 minutes at most. */
export const browserFlowTimeoutSeconds = 14 * 60;

/** The credential operations a login needs (shared/domain/credentials.ts). */
export interface LoginCredentials {
  forLogin(
    org: string,
    name: string,
  ): Promise<{ id: string; name: string; domain: string; values: Record<string, string>; totpSecret: string | null; ssoProvider: string | null } | undefined>;
  /** Undefined when a credential of that name belongs to another domain: nothing is written then. */
  saveFromLogin(
    org: string,
    credential: { name: string; domain: string; values: Record<string, string> },
  ): Promise<{ id: string; name: string; hasTotpSecret: boolean } | undefined>;
  /** The credential's public face; throws NotFoundError when there is none of that name. */
  get(org: string, idOrName: string): Promise<{ id: string; name: string; domain: string; has_totp_secret: boolean }>;
}

/** Answers to the resumable step waiting for input (SendTaskSuccess in Step Functions). */
export interface FlowSignal {
  resume(taskToken: string): Promise<void>;
}

export interface LoginOutcomeDeps extends FlowEndDeps {
  sessions: ProfileSessions;
  credentials: LoginCredentials;
  /** Seals the session evidence a success leaves on the record. */
  secrets: SecretBox;
}

export function loginTarget(connection: Connection): LoginTarget {
  return {
    domain: connection.domain,
    loginUrl: connection.login_url,
    allowedDomains: connection.allowed_domains,
    engine: connection.login_engine ?? null,
    recordSession: connection.record_session,
    owner: { org: connection.org, connectionId: connection.id },
  };
}

function sealContext(connection: Connection, flowId: string, purpose: "engine_state" | "submission") {
  return { org: connection.org, connection: connection.id, flow: flowId, purpose };
}

/** The prompt fields of the resource, empty between steps. */
function promptFields(prompt: FlowPrompt | null) {
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
function promptOf(connection: Connection): FlowPrompt {
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

/** How a flow ended, on the record and its timeline: needs only the connection store. */
export interface FlowEndDeps {
  connections: ConnectionStore;
  timelineRetentionDays: number;
  now?: () => Date;
}

const eventType = (connection: Connection) => (connection.flow_type === "REAUTH" ? "reauth" : "login");

export function flowEnds(deps: FlowEndDeps) {
  const clock = deps.now ?? (() => new Date());

  function timeline(
    type: TimelineEvent["type"],
    status: string,
    connection: Connection,
    error?: { code: string; message: string },
    replayId?: string | null,
  ): TimelineRecord {
    return timelineRecord(connection, { type, status, error, replayId }, clock(), deps.timelineRetentionDays);
  }

  /** `end.replayId`: the flow's kept trace, which the timeline event names. */
  async function fail(
    connection: Connection,
    guard: RecordGuard,
    end: { status: "FAILED" | "EXPIRED" | "CANCELED"; code: string; message: string; replayId?: string | null },
    changes: Partial<Connection> = {},
  ): Promise<boolean> {
    return deps.connections.recordOutcome(
      connection.org,
      connection.id,
      guard,
      { ...promptFields(null), ...flowSecretsCleared, flow_status: end.status, flow_step: "COMPLETED", error_code: end.code, error_message: end.message, ...changes },
      timeline(eventType(connection), end.status, connection, { code: end.code, message: end.message }, end.replayId),
    );
  }

  return {
    timeline,
    fail,

    async expire(connection: Connection, flowId: string, replayId?: string | null): Promise<void> {
      await fail(connection, { flowId }, { status: "EXPIRED", code: "flow_expired", message: "the login flow expired waiting for input", replayId });
    },
  };
}

/**
 * The end of a login or re-auth: success saves the session into the profile and the durable
 * values into the linked credential; either way the record and its timeline say how it ended.
 */
export function loginOutcomes(deps: LoginOutcomeDeps) {
  const clock = deps.now ?? (() => new Date());
  const ends = flowEnds(deps);
  const timeline = ends.timeline;

  async function profileDomains(connection: Connection): Promise<string[]> {
    const page = await deps.connections.list({ org: connection.org, scope: { kind: "profile", profileId: connection.profile_id }, offset: 0, limit: 100 });
    return [...new Set([connection.domain, ...page.items.map((item) => item.domain)])].sort();
  }

  /**
   * The credential the login leaves linked, if any, and whether the link moves to it. Asked to save,
   * the values typed go into the credential of the site each was typed on: the linked one when its
   * domain takes that page, else `<profile>-<site>`, never into a credential of another domain. The
   * link moves when the linked credential took none of them: to the one that took the password, or
   * the only one saved.
   */
  async function saveCredential(
    connection: Connection,
    values: Record<string, string>,
    typedHosts: Record<string, string>,
  ): Promise<{ credential: { id: string; name: string; hasTotpSecret: boolean } | undefined; relink: boolean }> {
    const linkedName = connection.credential?.name ?? null;
    const linked = linkedName
      ? await deps.credentials.get(connection.org, linkedName).catch((error: unknown) => {
          if (error instanceof NotFoundError) return undefined;
          throw error;
        })
      : undefined;
    const kept = { credential: linked && { id: linked.id, name: linked.name, hasTotpSecret: linked.has_totp_secret }, relink: false };
    if (!connection.save_credentials || Object.keys(values).length === 0) return kept;
    const groups = new Map<string, { name: string; domain: string; values: Record<string, string> }>();
    for (const [ref, value] of Object.entries(values)) {
      const host = typedHosts[ref];
      // A value whose page is not known is saved nowhere rather than under a site it may not belong to.
      if (host === undefined) continue;
      const site = linked && credentialFitsHost(linked.domain, host) ? { name: linked.name, domain: linked.domain } : siteCredential(connection, linked ? null : linkedName, host);
      const group = groups.get(site.name) ?? { ...site, values: {} };
      group.values[ref] = value;
      groups.set(site.name, group);
    }
    const saved: Array<{ credential: { id: string; name: string; hasTotpSecret: boolean }; holdsPassword: boolean }> = [];
    for (const group of groups.values()) {
      const credential = await deps.credentials.saveFromLogin(connection.org, group);
      if (credential) saved.push({ credential, holdsPassword: group.values.password !== undefined });
    }
    const own = saved.find((entry) => entry.credential.id === linked?.id);
    const chosen = own ?? saved.find((entry) => entry.holdsPassword) ?? saved[0];
    if (!chosen) return kept;
    return { credential: chosen.credential, relink: chosen.credential.name !== linkedName && chosen !== own };
  }

  return {
    ...ends,

    async succeed(
      connection: Connection,
      guard: RecordGuard,
      outcome: Extract<StepOutcome, { kind: "success" }>,
      changes: Partial<Connection> = {},
    ): Promise<boolean> {
      const saved = await deps.sessions.save(connection.org, { id: connection.profile_id, name: connection.profile_name }, await profileDomains(connection), outcome.session);
      if (!saved) return false;
      const { credential, relink } = await saveCredential(connection, outcome.durableValues, outcome.typedHosts ?? {});
      const reason = canReauthReason(outcome.requirements, credential !== undefined, credential?.hasTotpSecret ?? false, Boolean(connection.credential?.provider));
      const now = clock().toISOString();
      const evidence = await evidenceFields(deps.secrets, connection, outcome.evidence);
      return deps.connections.recordOutcome(
        connection.org,
        connection.id,
        guard,
        {
          ...promptFields(null),
          ...flowSecretsCleared,
          status: "AUTHENTICATED",
          flow_status: "SUCCESS",
          flow_step: "COMPLETED",
          website_error: null,
          error_code: null,
          error_message: null,
          sso_provider: outcome.ssoProvider,
          last_auth_at: now,
          post_login_url: outcome.postLoginUrl,
          ...evidence,
          login_requirements: outcome.requirements,
          login_engine: outcome.engine,
          can_reauth: reauthPossible(reason),
          can_reauth_reason: reason,
          reauth_rejected_credential: null,
          unverified_reauths: 0,
          ...(relink && credential ? { credential: { name: credential.name, provider: null, path: null, auto: false } } : {}),
          ...changes,
        },
        timeline(eventType(connection), "SUCCESS", connection, undefined, outcome.replayId),
      );
    },

  };
}

export interface LoginRouteDeps {
  connections: ConnectionStore;
  engine: Pick<LoginEngine, "probe">;
  sessions: Pick<ProfileSessions, "load">;
  /** Opens the session evidence the probe looks for. */
  secrets: Pick<SecretBox, "open">;
  workflow: WorkflowEngine;
  handoff: { issueHandoffCode(org: string, connectionId: string, expiresAt: string): Promise<string> };
  timing: Pick<WorkflowTiming, "timeScale">;
  /** `PUBLIC_BASE_URL`: where the service is reached, over the base URL each request was made to. */
  publicBaseUrl?: string;
  now?: () => Date;
}

export interface LoginResponse {
  id: string;
  flow_type: "LOGIN" | "REAUTH";
  hosted_url: string | null;
  flow_expires_at: string;
  handoff_code: string;
  live_view_url?: string;
}

/**
 * How long the code of a login answered at once (the saved session still works) can be exchanged:
 * there is no flow for it to expire with, yet the person sent its link must still reach the page's
 * success state and the caller's success_url. Not scaled by the local time scale: a person clicks it.
 */
export const settledLoginCodeSeconds = 10 * 60;

/**
 * The hosted login page of a connection, opened with a handoff code. Only the login answer carries
 * it: the code is single-use and kept only hashed, so the record's own `hosted_url` stays null.
 */
export function hostedLoginUrl(baseUrl: string, connectionId: string, handoffCode: string): string {
  return `${baseUrl}/login/${encodeURIComponent(connectionId)}?code=${encodeURIComponent(handoffCode)}`;
}

/** The login and submit routes: start (or rejoin) a flow, and hand the user's input to it. */
export function loginRouteCore(deps: LoginRouteDeps) {
  const clock = deps.now ?? (() => new Date());

  const existing = (org: string, id: string) => existingConnection(deps.connections, org, id);

  /** `codeExpiresAt`: when the link's code stops exchanging; the flow's own expiry unless given. */
  async function respond(connection: Connection, requestBaseUrl: string, codeExpiresAt?: string): Promise<LoginResponse> {
    const expiresAt = connection.flow_expires_at ?? clock().toISOString();
    const handoffCode = await deps.handoff.issueHandoffCode(connection.org, connection.id, codeExpiresAt ?? expiresAt);
    return {
      id: connection.id,
      flow_type: connection.flow_type ?? "LOGIN",
      hosted_url: hostedLoginUrl(deps.publicBaseUrl ?? requestBaseUrl, connection.id, handoffCode),
      flow_expires_at: expiresAt,
      handoff_code: handoffCode,
    };
  }

  /** A login on a connection whose saved session still works needs no flow. */
  async function sessionStillWorks(connection: Connection): Promise<boolean> {
    if (connection.status !== "AUTHENTICATED" || !connection.post_login_url || connection.flow_status === "IN_PROGRESS") return false;
    // The route runs no browser, and only one can tell whether a browser login's session still works.
    if (connection.login_engine === "browser") return false;
    const session = await deps.sessions.load(connection.org, connection.profile_id).catch(noSessionIfTooLarge);
    if (!session) return false;
    const probe = await deps.engine.probe(loginTarget(connection), session, connection.post_login_url, await openEvidence(deps.secrets, connection));
    return probe.state === "logged_in";
  }

  return {
    /** `requestBaseUrl`: where the caller reached the API, the hosted page's base unless `publicBaseUrl` is set. */
    async login(org: string, id: string, requestBaseUrl: string): Promise<LoginResponse> {
      const connection = await existing(org, id);
      // A create that failed or was cut off before its workflow started left this mark; the health
      // checks it misses matter from a login on.
      if (connection.workflow_start_pending) await startFirstExecution(deps, connection);
      const now = clock();
      if (await sessionStillWorks(connection)) {
        const codeExpiresAt = new Date(now.getTime() + settledLoginCodeSeconds * 1000).toISOString();
        return respond({ ...connection, flow_expires_at: now.toISOString() }, requestBaseUrl, codeExpiresAt);
      }
      const flowId = randomBytes(6).toString("hex");
      const executionName = `${id}-login-${flowId}`;
      const begun = await deps.connections.beginFlow(
        org,
        id,
        {
          ...noFlow,
          ...flowSecretsCleared,
          flow_status: "IN_PROGRESS",
          flow_step: "DISCOVERING",
          flow_type: "LOGIN",
          flow_expires_at: new Date(now.getTime() + scaledMs(flowTimeoutSeconds, deps.timing)).toISOString(),
          flow_id: flowId,
          flow_started_at: now.toISOString(),
          flow_execution_arn: deps.workflow.executionArn(executionName),
        },
        now.toISOString(),
      );
      if (!begun) throw new NotFoundError(`auth connection '${id}' not found`);
      if (!begun.started) return respond(begun.connection, requestBaseUrl);
      // A flow that outlived its expiry without ending (its execution lost) must not run on.
      if (connection.flow_status === "IN_PROGRESS" && connection.flow_execution_arn) await deps.workflow.stop(connection.flow_execution_arn);
      const input: FlowExecutionInput = { org, connection_id: id, flow_id: flowId };
      await deps.workflow.start(executionName, input);
      // Deleted meanwhile: that delete could not stop an execution that did not exist yet.
      if ((await deps.connections.get(org, id))?.flow_id !== flowId) await deps.workflow.stop(deps.workflow.executionArn(executionName));
      return respond(begun.connection, requestBaseUrl);
    },
  };
}

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
      const waiting = connection.flow_status === "IN_PROGRESS" && connection.flow_step === "AWAITING_INPUT" && flowId;
      if (!waiting) throw new ConflictError(`auth connection '${id}' has no login flow waiting for input (flow_status ${connection.flow_status ?? "null"}, flow_step ${connection.flow_step ?? "null"})`);
      if (connection.flow_expires_at && Date.parse(connection.flow_expires_at) <= clock().getTime()) {
        throw new ConflictError(`the login flow of auth connection '${id}' has expired: start a new login`);
      }
      const problem = submissionProblem(promptOf(connection), given);
      if (problem) throw new BadRequestError(`submit: ${problem}`, [{ code: "body", message: problem }]);
      const sealed = await deps.secrets.seal(JSON.stringify(given), sealContext(connection, flowId, "submission"));
      const updated = await deps.connections.guardedUpdate(
        org,
        id,
        { flowId, step: "AWAITING_INPUT" },
        { flow_submission: sealed, flow_step: "SUBMITTING", website_error: null },
      );
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

export interface LoginStepDeps extends LoginOutcomeDeps {
  engine: Pick<LoginEngine, "start" | "submit" | "release">;
  secrets: SecretBox;
  timing: Pick<WorkflowTiming, "timeScale">;
  /** How often a step holding a live browser reads the record for the next submission. */
  submissionPollMs?: number;
}

export type LoginStepOutput = FlowExecutionInput & ({ next: "await_input"; input_timeout_seconds: number } | { next: "end" });

/** The connection, while `input`'s flow is its flow and in progress. */
async function currentFlow(connections: ConnectionStore, input: FlowExecutionInput): Promise<Connection | undefined> {
  const connection = await connections.get(input.org, input.connection_id);
  return connection?.flow_id === input.flow_id && connection.flow_status === "IN_PROGRESS" ? connection : undefined;
}

/** A login flow's LoginStep task state: discovery, or the step after the user's input. */
export function loginStepCore(deps: LoginStepDeps) {
  const clock = deps.now ?? (() => new Date());
  const outcomes = loginOutcomes(deps);

  async function open<T>(connection: Connection, flowId: string, purpose: "engine_state" | "submission", sealed: string): Promise<T> {
    return JSON.parse(await deps.secrets.open(sealed, sealContext(connection, flowId, purpose))) as T;
  }

  /** `heldState`: the state of the step this invocation holds, which the record has sealed too. */
  async function runStep(connection: Connection, flowId: string, heldState?: EngineState): Promise<StepOutcome | "no_submission"> {
    try {
      if (!connection.flow_engine_state) return await deps.engine.start(loginTarget(connection));
      if (!connection.flow_submission) return "no_submission";
      const state = heldState ?? (await open<EngineState>(connection, flowId, "engine_state", connection.flow_engine_state));
      const submission = await open<Submission>(connection, flowId, "submission", connection.flow_submission);
      return await deps.engine.submit(loginTarget(connection), state, submission);
    } catch (error) {
      log.error("login step failed", { connectionId: connection.id, flowId, error: error instanceof Error ? error.name : "unknown" });
      return { kind: "failure", errorCode: "internal_error", message: "the login engine failed unexpectedly" };
    }
  }

  return {
    async loginStep(input: FlowExecutionInput): Promise<LoginStepOutput> {
      const ended: LoginStepOutput = { ...input, next: "end" };
      const connection = await currentFlow(deps.connections, input);
      if (!connection) return ended;
      const now = clock();
      // A browser flow whose step was lost resumes here, within its own shorter limit.
      const limitSeconds = connection.browser_session_id ? browserFlowTimeoutSeconds : flowTimeoutSeconds;
      const deadline = Date.parse(connection.flow_started_at ?? now.toISOString()) + scaledMs(limitSeconds, deps.timing);
      if (now.getTime() >= deadline) {
        await outcomes.expire(connection, input.flow_id);
        return ended;
      }
      let outcome = await runStep(connection, input.flow_id);
      if (outcome === "no_submission") {
        return { ...input, next: "await_input", input_timeout_seconds: timeoutSeconds(Date.parse(connection.flow_expires_at ?? "") - now.getTime()) };
      }
      let current = connection;
      /** The state of a live browser this invocation holds: released on every way out, an error's included. */
      let held: EngineState | null = null;
      try {
        return await followFlow();
      } finally {
        if (held) await deps.engine.release(held);
      }

      async function followFlow(): Promise<LoginStepOutput> {
        for (;;) {
          if (outcome === "no_submission") throw new Error("a submission read from the record went missing");
          // An engine that ends a flow closes what it held itself.
          if (outcome.kind !== "input") held = null;
          if (outcome.kind === "success") {
            await outcomes.succeed(current, { flowId: input.flow_id }, outcome);
            return ended;
          }
          if (outcome.kind === "failure") {
            await outcomes.fail(current, { flowId: input.flow_id }, { status: "FAILED", code: outcome.errorCode, message: outcome.message, replayId: outcome.replayId });
            return ended;
          }
          const live = outcome.browserSessionId;
          held = live ? outcome.state : null;
          const flowDeadline = live ? Math.min(deadline, Date.parse(current.flow_started_at ?? now.toISOString()) + scaledMs(browserFlowTimeoutSeconds, deps.timing)) : deadline;
          const expiresAt = Math.min(clock().getTime() + scaledMs(inputTimeoutSeconds, deps.timing), flowDeadline);
          const waiting = await deps.connections.guardedUpdate(current.org, current.id, { flowId: input.flow_id }, {
            ...promptFields(outcome.prompt),
            flow_step: "AWAITING_INPUT",
            website_error: outcome.websiteError,
            flow_expires_at: new Date(expiresAt).toISOString(),
            flow_engine_state: await deps.secrets.seal(JSON.stringify(outcome.state), sealContext(current, input.flow_id, "engine_state")),
            flow_submission: null,
            flow_task_token: null,
            browser_session_id: live ?? null,
          });
          if (!waiting) return ended;
          if (!live) return { ...input, next: "await_input", input_timeout_seconds: timeoutSeconds(expiresAt - clock().getTime()) };
          // The browser holds the page, which no other invocation can reach: this one waits for the answer.
          const answered = await nextSubmission(input, expiresAt);
          if (answered === "ended" || answered === "expired") {
            held = null;
            // A deleted connection's trace goes with it; an expired flow's is one people debug.
            const replayId = await deps.engine.release(outcome.state, answered === "expired");
            if (answered === "expired") await outcomes.expire(waiting, input.flow_id, replayId);
            return ended;
          }
          current = answered;
          outcome = await runStep(current, input.flow_id, outcome.state);
        }
      }
    },
  };

  /** Polls the record until a submission comes, the flow ends elsewhere (deleted, canceled), or it expires. */
  async function nextSubmission(input: FlowExecutionInput, expiresAt: number): Promise<Connection | "ended" | "expired"> {
    for (;;) {
      // Read after the clock: a submission the route took before the expiry is still answered.
      const expired = clock().getTime() >= expiresAt;
      const connection = await currentFlow(deps.connections, input);
      if (!connection) return "ended";
      if (connection.flow_step === "SUBMITTING" && connection.flow_submission) return connection;
      if (expired) return "expired";
      await sleep(deps.submissionPollMs ?? submissionPollMs);
    }
  }
}

/** A login flow's AwaitInput task state: registers the token submit answers, or answers it when input already came. */
export function awaitInputCore(deps: { connections: ConnectionStore; signal: FlowSignal }) {
  return {
    async awaitInput(input: FlowExecutionInput & { task_token: string }): Promise<void> {
      const registered = await deps.connections.guardedUpdate(
        input.org,
        input.connection_id,
        { flowId: input.flow_id, step: "AWAITING_INPUT" },
        { flow_task_token: input.task_token },
      );
      // Not waiting any more: input arrived first, or the flow ended; the next step tells which.
      if (!registered) await deps.signal.resume(input.task_token);
    },
  };
}

/** A login flow's ExpireFlow task state: no input came in time. */
export function expireFlowCore(deps: FlowEndDeps) {
  const ends = flowEnds(deps);
  return {
    async expireFlow(input: FlowExecutionInput): Promise<void> {
      const connection = await currentFlow(deps.connections, input);
      if (connection) await ends.expire(connection, input.flow_id);
    },
  };
}

/** Step Functions takes whole seconds, at least one. */
function timeoutSeconds(ms: number): number {
  return Math.max(1, Math.ceil((Number.isFinite(ms) ? ms : 0) / 1000));
}

/**
 * The credential for values typed on `host` when the linked one does not take them: one per site,
 * named `<profile>-<site>`, the site being the connection's domain, the `allowed_domains` entry the
 * host is in, or the host itself (an identity provider's). A link by a name no credential has yet
 * keeps that name for the connection's own domain.
 */
function siteCredential(connection: Connection, linkedName: string | null, host: string): { name: string; domain: string } {
  if (credentialFitsHost(connection.domain, host)) {
    return { name: linkedName ?? `${connection.profile_name}-${connection.domain}`.slice(0, 255), domain: connection.domain };
  }
  const domain = connection.allowed_domains.find((allowed) => credentialFitsHost(allowed, host)) ?? host;
  return { name: `${connection.profile_name}-${domain}`.slice(0, 255), domain };
}
