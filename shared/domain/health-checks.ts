import { ArchiveTooLargeError } from "../archive/errors.ts";
import type { StorageState } from "../archive/storage-state.ts";
import { countMetric, log } from "../log.ts";
import { totpCode } from "../secrets/totp.ts";
import { credentialFitsHost } from "../policy/scope.ts";
import type { LoginEngine, ProbeOutcome, SessionEvidence, StepOutcome } from "../login/types.ts";
import type { SecretBox } from "../secrets/secret-box.ts";
import { checkWithEngines, type EngineCheck } from "./check-engine.ts";
import { timelineRecord, type Connection, type ConnectionStore } from "./connection.ts";
import { loginOutcomes, profileDomains, type LoginOutcomeDeps } from "./flows/outcomes.ts";
import { failed } from "./flows/state.ts";
import { loginTarget } from "./flows/step.ts";
import type { ProfileSessions, SavedSession } from "./profile-sessions.ts";
import { evidenceFields, openEvidence } from "./sealed-evidence.ts";
import { renewedSession } from "./session-renewal.ts";
import { answerPrompt, credentialSent, maxUnverifiedReauths, reauthRateLimited, reauthStopped, secretsAsked, sessionStood, type ReauthBlock } from "./reauth.ts";
import { executionName, nextCheckAt, type WorkflowEngine, type WorkflowState, type WorkflowTiming } from "./workflow.ts";

export interface HealthCheckTaskInput {
  org: string;
  connection_id: string;
  generation: number;
  iteration: number;
  execution_id: string;
  execution_started_at: string;
}

/** The task's answer: the next loop state, and which way the workflow goes. */
export type HealthCheckTaskOutput = WorkflowState & {
  next: "wait" | "reauth" | "wait_out_rate_limit" | "continue_as_new" | "end";
  /** `wait_out_rate_limit`: when the site's rate limit has passed and the loop checks (and may re-auth) again. */
  retry_at?: string;
};

export interface ContinueAsNewTaskInput {
  org: string;
  connection_id: string;
  generation: number;
  next_check_at: string;
  execution_id: string;
}

/**
 * What asking a site whether a saved session still works takes: the record, the session (and saving
 * back what the site renewed meanwhile), its sealed evidence, the probe.
 */
export interface SessionCheckDeps {
  connections: ConnectionStore;
  engine: Pick<LoginEngine, "probe">;
  sessions: Pick<ProfileSessions, "load" | "saveRenewed">;
  /** Opens the session evidence the probe looks for. */
  secrets: Pick<SecretBox, "open">;
  now?: () => Date;
}

export interface HealthCheckDeps extends SessionCheckDeps {
  /** Also seals the evidence a check learnt where the login's could not tell. */
  secrets: Pick<SecretBox, "open" | "seal">;
  timing: WorkflowTiming;
  timelineRetentionDays: number;
}

/** Only handing the loop to a new execution needs the engine. */
export interface ContinuationDeps {
  connections: ConnectionStore;
  engine: WorkflowEngine;
  timing: Pick<WorkflowTiming, "timeScale">;
  now?: () => Date;
}

export interface ReauthDeps extends LoginOutcomeDeps {
  engine: Pick<LoginEngine, "start" | "submit" | "release">;
  timing: WorkflowTiming;
}

const dayMs = 24 * 60 * 60 * 1000;

/** A login of more steps than this is not one a stored credential should keep answering. */
const maxReauthSteps = 8;

type ReplayOutcome =
  | Exclude<StepOutcome, { kind: "input" }>
  | { kind: "blocked"; reason: ReauthBlock }
  | { kind: "rejected"; credentialId: string; message: string; websiteError: string | null }
  /** The login led to a page outside the credential's domain, where nothing was typed. */
  | { kind: "misplaced"; credentialId: string; message: string }
  | { kind: "limited"; credentialId: string; message: string; retryAfterSeconds: number | null };

/** What a re-auth has sent so far, known even when the engine fails part-way. */
interface Sent {
  credentialId: string | null;
  secrets: Set<string>;
  /** The re-auth's kept trace, when the connection records sessions. */
  replayId: string | null;
}

/** Where the loop goes after a check (or re-auth) of `connection`. */
function loopNext(
  input: HealthCheckTaskInput,
  connection: Connection,
  now: Date,
  timing: WorkflowTiming,
): Pick<HealthCheckTaskOutput, "next_check_at" | "next"> & { iteration: number } {
  const iteration = input.iteration + 1;
  const age = now.getTime() - Date.parse(input.execution_started_at);
  const due = iteration >= timing.maxIterations || age >= timing.maxAgeDays * dayMs;
  return { iteration, next_check_at: nextCheckAt(now, connection.health_check_interval, timing), next: due ? "continue_as_new" : "wait" };
}

/**
 * `sessionStood`: the check found the session, or, on a page that cannot prove it either way, saw no
 * sign of its end; either way the re-auths before it did not end in a session lost at once.
 */
type Check = {
  status: Connection["status"];
  reauth: boolean;
  sessionStood?: boolean;
  error?: { code: string; message: string };
  /** Which engine asked the site, and whether that took another than the usual one (check-engine.ts). */
  engine?: Omit<EngineCheck, "probe">;
  /** Evidence the check learnt where the login's could not tell, for the checks after it. */
  learnt?: SessionEvidence;
};

/**
 * Asks the site whether the profile's `saved` session still works, and keeps what the site renewed
 * while it answered: a check that found the session logged in, or saw no sign of its end on a page
 * that cannot prove it, saves the session as the check left it back into the profile when it changed,
 * unless the profile's session was saved again meanwhile (a newer login's is never replaced). A
 * check that found the session ended, or could not ask, saves nothing. The health check and the
 * login route's check of the session both ask through here; `check` is how each asks.
 */
export async function checkSavedSession<Checked extends { probe: ProbeOutcome }>(
  deps: SessionCheckDeps,
  connection: Connection,
  saved: SavedSession,
  check: (session: StorageState) => Promise<Checked>,
): Promise<Checked> {
  const checked = await check(saved.state);
  const { probe } = checked;
  if ((probe.state !== "logged_in" && probe.state !== "inconclusive") || !probe.session) return checked;
  const renewed = renewedSession(saved.state, probe.session, (deps.now ?? (() => new Date()))());
  if (!renewed) return checked;
  // A renewal that cannot be kept leaves the session the check found: its verdict stands.
  await deps.sessions
    .saveRenewed(connection.org, connection.profile_id, await profileDomains(deps.connections, connection), saved, renewed)
    .catch((error: unknown) => log.warn("the session the site renewed could not be saved", { connectionId: connection.id, error: error instanceof Error ? error.name : "unknown" }));
  return checked;
}

/** The workflow's HealthCheck task state (functions/workflow/health-check.ts). */
export function healthCheckCore(deps: HealthCheckDeps) {
  const clock = deps.now ?? (() => new Date());

  /** Asks the site, with the profile's saved session, whether the connection is still logged in. */
  async function checkSession(connection: Connection): Promise<Check> {
    if (connection.last_auth_at === null || !connection.post_login_url) {
      return { status: "NEEDS_AUTH", reauth: false, error: { code: "no_session", message: "no successful login yet: there is no session to check" } };
    }
    const session = await deps.sessions.load(connection.org, connection.profile_id).catch((error: unknown) => {
      if (error instanceof ArchiveTooLargeError) return error;
      throw error;
    });
    // Such an archive predates the cap on imports; a new login replaces it.
    if (session instanceof ArchiveTooLargeError) {
      return { status: "NEEDS_AUTH", reauth: connection.auto_reauth && connection.can_reauth, error: { code: "profile_archive_too_large", message: `the profile's saved session cannot be used: ${session.message}` } };
    }
    if (!session) return { status: "NEEDS_AUTH", reauth: connection.auto_reauth && connection.can_reauth, error: { code: "logged_out", message: "the profile holds no saved session" } };
    const evidence = await openEvidence(deps.secrets, connection);
    const postLoginUrl = connection.post_login_url;
    const { probe, ...engine } = await checkSavedSession(deps, connection, session, (state) => checkWithEngines(deps.engine, { ...connection, post_login_url: postLoginUrl }, state, evidence));
    if (probe.state === "logged_in") return { status: "AUTHENTICATED", reauth: false, sessionStood: true, engine, learnt: probe.evidence };
    if (probe.state === "unreachable") return { status: connection.status, reauth: false, engine, error: { code: "site_unreachable", message: probe.reason } };
    // A page that proves nothing neither confirms the session nor ends it: the status stays as the login left it.
    if (probe.state === "inconclusive") {
      return { status: connection.status, reauth: false, sessionStood: true, engine, error: { code: "session_unverifiable", message: probe.reason } };
    }
    return { status: "NEEDS_AUTH", reauth: connection.auto_reauth && connection.can_reauth, engine, error: { code: "logged_out", message: probe.reason } };
  }

  /** Keeps what a check learnt for the checks after it, unless a login replaced the evidence meanwhile. */
  async function keepLearnt(connection: Connection, learnt: SessionEvidence): Promise<void> {
    if (!connection.session_evidence_sealed) return;
    const fields = await evidenceFields(deps.secrets, connection, learnt);
    await deps.connections.guardedUpdate(connection.org, connection.id, { sealedEvidence: connection.session_evidence_sealed }, fields);
  }

  return {
    async healthCheck(input: HealthCheckTaskInput): Promise<HealthCheckTaskOutput> {
      const now = clock();
      const loop = { org: input.org, connection_id: input.connection_id, generation: input.generation };
      const ended: HealthCheckTaskOutput = { ...loop, iteration: input.iteration + 1, next_check_at: now.toISOString(), next: "end" };
      const connection = await deps.connections.get(input.org, input.connection_id);
      if (!connection || connection.execution_arn !== input.execution_id) return ended;
      const next = loopNext(input, connection, now, deps.timing);
      if (!connection.health_checks) return { ...loop, ...next };
      const outcome = await checkSession(connection);
      const checkedAt = clock();
      const inconclusiveChecks = outcome.engine?.inconclusiveChecks ?? 0;
      const recorded = await deps.connections.recordOutcome(
        input.org,
        input.connection_id,
        { executionArn: input.execution_id },
        {
          last_auth_check_at: checkedAt.toISOString(),
          status: outcome.status,
          ...(outcome.sessionStood ? sessionStood(connection) : {}),
          ...(inconclusiveChecks !== (connection.inconclusive_checks ?? 0) ? { inconclusive_checks: inconclusiveChecks } : {}),
        },
        timelineRecord(
          connection,
          { type: "health_check", status: outcome.status, error: outcome.error, checkedWith: outcome.engine?.checkedWith, note: outcome.engine?.note },
          checkedAt,
          deps.timelineRetentionDays,
        ),
      );
      if (!recorded) return ended;
      if (outcome.learnt) await keepLearnt(connection, outcome.learnt);
      return { ...loop, ...next, ...(outcome.reauth ? { next: "reauth" as const } : {}) };
    },
  };
}

/**
 * The workflow's Reauth task state: logs in again with the linked credential, answering every step
 * without a human; a step that needs one (an SMS code) leaves the connection NEEDS_AUTH and says why.
 */
export function reauthCore(deps: ReauthDeps) {
  const clock = deps.now ?? (() => new Date());
  const outcomes = loginOutcomes(deps);

  /** The stored credential, each secret sent once: the site asking for one again has refused it. */
  async function replay(connection: Connection, sent: Sent): Promise<ReplayOutcome> {
    const name = connection.credential?.name;
    const credential = name ? await deps.credentials.forLogin(connection.org, name) : undefined;
    if (!credential) return { kind: "blocked", reason: "no_credential" };
    sent.credentialId = credential.id;
    const totpSecret = credential.totpSecret;
    // A credential of another site than the connection's (its identity provider's) signs in through the provider the last login took.
    const ssoProvider = credential.ssoProvider ?? (credentialFitsHost(credential.domain, connection.domain) ? null : connection.sso_provider);
    const answers = { values: credential.values, totpCode: totpSecret ? () => totpCode(totpSecret) : null, ssoProvider };
    const target = loginTarget(connection);
    let outcome = await deps.engine.start(target);
    try {
      for (let step = 0; outcome.kind === "input" && step < maxReauthSteps; step++) {
        const asked = secretsAsked(outcome.prompt);
        if (asked.some((secret) => sent.secrets.has(secret))) {
          const siteSays = outcome.websiteError ? `: ${outcome.websiteError}` : "";
          return { kind: "rejected", credentialId: credential.id, message: `the site did not accept the stored credential${siteSays}`, websiteError: outcome.websiteError };
        }
        const answer = answerPrompt(outcome.prompt, answers);
        if ("blocked" in answer) return { kind: "blocked", reason: answer.blocked };
        // A step answered by a choice (the identity provider's button) sends none of the secrets its form asks for.
        if (answer.submission.field_values) for (const secret of asked) sent.secrets.add(secret);
        outcome = await deps.engine.submit(target, outcome.state, answer.submission, { credentialDomain: credential.domain, totpCodeFields: answer.totpCodeFields });
      }
      if (outcome.kind === "failure" && outcome.errorCode === "credential_domain_mismatch") {
        return { kind: "misplaced", credentialId: credential.id, message: outcome.message };
      }
      if (outcome.kind === "failure" && outcome.errorCode === "credentials_invalid") {
        return { kind: "rejected", credentialId: credential.id, message: outcome.message, websiteError: null };
      }
      if (outcome.kind === "failure" && outcome.errorCode === "rate_limited") {
        return { kind: "limited", credentialId: credential.id, message: outcome.message, retryAfterSeconds: outcome.retryAfterSeconds ?? null };
      }
      if (outcome.kind !== "input") return outcome;
      return { kind: "failure", errorCode: "unsupported_auth_method", message: `the login did not finish within ${maxReauthSteps} steps` };
    } finally {
      // Stopped at a step (refused, needs a human, too many steps): a browser may still hold its page,
      // and its trace shows why the re-auth stopped.
      sent.replayId = outcome.kind === "input" ? await deps.engine.release(outcome.state, true) : (outcome.replayId ?? null);
    }
  }

  return {
    async reauth(input: HealthCheckTaskInput & { next_check_at: string }): Promise<HealthCheckTaskOutput> {
      const loop = { org: input.org, connection_id: input.connection_id, generation: input.generation };
      const found = await deps.connections.get(input.org, input.connection_id);
      if (!found || found.execution_arn !== input.execution_id) return { ...loop, iteration: input.iteration, next_check_at: input.next_check_at, next: "end" };
      const guard = { executionArn: input.execution_id };
      const connection = { ...found, flow_type: "REAUTH" as const };
      const sent: Sent = { credentialId: null, secrets: new Set(), replayId: null };
      const outcome = await replay(connection, sent).catch((error: unknown) => {
        log.error("re-auth failed", { connectionId: connection.id, error: error instanceof Error ? error.name : "unknown" });
        return { kind: "failure" as const, errorCode: "internal_error" as const, message: "the login engine failed unexpectedly" };
      });
      const reauthFlow = { flow_type: "REAUTH" as const, flow_id: null, flow_started_at: clock().toISOString(), flow_expires_at: null };
      // A rejection or a step only a person can answer stops re-auth by itself.
      const sentCredential = sent.secrets.size > 0 ? sent.credentialId : null;
      const counted = sentCredential !== null && outcome.kind !== "rejected" && outcome.kind !== "blocked" && outcome.kind !== "misplaced";
      const unverified = counted ? credentialSent(found, sentCredential) : { changes: {}, stopped: false };
      const stopNote = unverified.stopped ? `; re-auth stops: ${maxUnverifiedReauths} re-auths sent the stored credential and no check since saw the session stand` : "";
      let written: boolean;
      let retryAt: string | null = null;
      if (outcome.kind === "success") {
        written = await outcomes.succeed(connection, guard, outcome, { ...reauthFlow, ...unverified.changes });
      } else if (outcome.kind === "rejected") {
        written = await outcomes.fail(
          connection,
          guard,
          { ...failed("credentials_invalid", outcome.message), replayId: sent.replayId },
          { ...reauthFlow, status: "NEEDS_AUTH", website_error: outcome.websiteError, ...reauthStopped(connection, outcome.credentialId) },
        );
      } else if (outcome.kind === "misplaced") {
        // Typing the credential on another site is refused every time: re-auth stops until the link, the credential or a person's login changes that.
        written = await outcomes.fail(
          connection,
          guard,
          { ...failed("credential_domain_mismatch", outcome.message), replayId: sent.replayId },
          { ...reauthFlow, status: "NEEDS_AUTH", ...reauthStopped(connection, outcome.credentialId) },
        );
      } else if (outcome.kind === "limited") {
        // `found`, not `connection`: whether the last flow was a rate-limited re-auth.
        const limited = unverified.stopped ? { retryAt: null, message: `${outcome.message}${stopNote}`, changes: {} } : reauthRateLimited(found, outcome, clock(), deps.timing);
        retryAt = limited.retryAt;
        written = await outcomes.fail(
          connection,
          guard,
          { ...failed("rate_limited", limited.message), replayId: sent.replayId },
          { ...reauthFlow, status: "NEEDS_AUTH", ...unverified.changes, ...limited.changes },
        );
      } else {
        const blocked = outcome.kind === "blocked";
        written = await outcomes.fail(
          connection,
          guard,
          {
            ...failed(blocked ? "unsupported_auth_method" : outcome.errorCode, blocked ? `re-authentication needs a human: ${outcome.reason}` : `${outcome.message}${stopNote}`),
            replayId: sent.replayId,
          },
          { ...reauthFlow, status: "NEEDS_AUTH", ...unverified.changes, ...(blocked ? { can_reauth: false, can_reauth_reason: outcome.reason } : {}) },
        );
      }
      countMetric("ReAuths", { outcome: outcome.kind === "success" ? "SUCCESS" : "FAILED", connectionId: connection.id });
      // The loop goes on from the check's schedule: the re-auth does not count as an iteration.
      const onSchedule = { ...loop, iteration: input.iteration, next_check_at: input.next_check_at };
      if (!written) return { ...onSchedule, next: "end" };
      if (retryAt !== null) return { ...onSchedule, next: "wait_out_rate_limit", retry_at: retryAt };
      return { ...onSchedule, next: "wait" };
    },
  };
}

/** The workflow's ContinueAsNew task state, and the local runtime's resume after a restart. */
export function continuationCore(deps: ContinuationDeps) {
  const clock = deps.now ?? (() => new Date());

  /**
   * Hands the loop to a fresh execution before Step Functions' history or age limit. The record
   * moves to the new execution only if it still names this one; otherwise (deleted, or already
   * handed over) the new execution is stopped, so exactly one runs per connection.
   */
  async function continueAsNew(input: ContinueAsNewTaskInput): Promise<Record<string, never>> {
    const generation = input.generation + 1;
    const name = executionName(input.connection_id, generation);
    const state = { org: input.org, connection_id: input.connection_id, generation, iteration: 0, next_check_at: input.next_check_at };
    const arn = await deps.engine.start(name, state);
    const moved = await deps.connections.swapExecution(input.org, input.connection_id, input.execution_id, { arn, generation });
    if (!moved) await deps.engine.stop(arn);
    return {};
  }

  return {
    continueAsNew,

    /** After a restart of the local runtime, whose executions lived in its memory. */
    async resume(connection: Connection): Promise<void> {
      if (!connection.execution_arn) return;
      await continueAsNew({
        org: connection.org,
        connection_id: connection.id,
        generation: connection.workflow_generation,
        next_check_at: nextCheckAt(clock(), connection.health_check_interval, deps.timing),
        execution_id: connection.execution_arn,
      });
    },
  };
}

