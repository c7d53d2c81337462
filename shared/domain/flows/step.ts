import { setTimeout as sleep } from "node:timers/promises";
import { log } from "../../log.ts";
import type { EngineState, LoginEngine, LoginTarget, StepOutcome, Submission } from "../../login/types.ts";
import type { SecretBox } from "../../secrets/secret-box.ts";
import type { FlowExecutionInput } from "../../workflow/definition.ts";
import type { Connection, ConnectionStore } from "../connection.ts";
import { scaledMs, type WorkflowTiming } from "../workflow.ts";
import { flowEnds, loginOutcomes, type FlowEndDeps, type LoginOutcomeDeps } from "./outcomes.ts";
import { awaitingInput, awaitingInputIn, failed, inFlow, isInProgress, isSubmitted, sealContext } from "./state.ts";
import type { FlowSignal } from "./submit.ts";

/** How long a flow may wait for input, and live in all (api.md, Flow rules); scaled locally. */
export const inputTimeoutSeconds = 10 * 60;
export const flowTimeoutSeconds = 20 * 60;
/** How often a step holding a live browser reads the record for the next submission, by default. */
export const submissionPollMs = 100;
/** A browser flow's one invocation holds its browser throughout, and a Lambda runs 15 minutes at most. */
export const browserFlowTimeoutSeconds = 14 * 60;

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
  return connection?.flow_id === input.flow_id && isInProgress(connection) ? connection : undefined;
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
            await outcomes.succeed(current, inFlow(input.flow_id), outcome);
            return ended;
          }
          if (outcome.kind === "failure") {
            await outcomes.fail(current, inFlow(input.flow_id), { ...failed(outcome.errorCode, outcome.message), replayId: outcome.replayId });
            return ended;
          }
          const live = outcome.browserSessionId;
          held = live ? outcome.state : null;
          const flowDeadline = live ? Math.min(deadline, Date.parse(current.flow_started_at ?? now.toISOString()) + scaledMs(browserFlowTimeoutSeconds, deps.timing)) : deadline;
          const expiresAt = Math.min(clock().getTime() + scaledMs(inputTimeoutSeconds, deps.timing), flowDeadline);
          const waiting = await deps.connections.guardedUpdate(
            current.org,
            current.id,
            inFlow(input.flow_id),
            awaitingInput({
              prompt: outcome.prompt,
              websiteError: outcome.websiteError,
              expiresAt: new Date(expiresAt).toISOString(),
              sealedState: await deps.secrets.seal(JSON.stringify(outcome.state), sealContext(current, input.flow_id, "engine_state")),
              browserSessionId: live ?? null,
            }),
          );
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
      if (isSubmitted(connection) && connection.flow_submission) return connection;
      if (expired) return "expired";
      await sleep(deps.submissionPollMs ?? submissionPollMs);
    }
  }
}

/** A login flow's AwaitInput task state: registers the token submit answers, or answers it when input already came. */
export function awaitInputCore(deps: { connections: ConnectionStore; signal: FlowSignal }) {
  return {
    async awaitInput(input: FlowExecutionInput & { task_token: string }): Promise<void> {
      const registered = await deps.connections.guardedUpdate(input.org, input.connection_id, awaitingInputIn(input.flow_id), { flow_task_token: input.task_token });
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
