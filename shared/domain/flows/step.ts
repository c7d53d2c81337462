import { Deadline } from "../../deadline.ts";
import { log } from "../../log.ts";
import type { EngineState, LoginEngine, LoginTarget, StepOutcome, Submission } from "../../login/types.ts";
import type { SecretBox } from "../../secrets/secret-box.ts";
import type { Connection, ConnectionStore } from "../connection.ts";
import { totpCodeFields, unnamedCodeValues } from "../reauth.ts";
import { scaledMs, type FlowExecutionInput, type FlowSignal, type WorkflowTiming } from "../workflow.ts";
import { flowEnds, loginOutcomes, type FlowEndDeps, type LoginOutcomeDeps } from "./outcomes.ts";
import { awaitingInput, awaitingInputIn, failed, inFlow, isInProgress, isSubmitted, promptOf, sealContext } from "./state.ts";

/** How long a flow may wait for input, and live in all (api.md, Flow rules); scaled locally. */
export const inputTimeoutSeconds = 10 * 60;
export const flowTimeoutSeconds = 20 * 60;
/** How often a step holding a live browser reads the record for the next submission, by default. */
export const submissionPollMs = 100;
/** A browser flow's one invocation holds its browser throughout, and a Lambda runs 15 minutes at most. */
export const browserFlowTimeoutSeconds = 14 * 60;

/** Where a connection's login may go, and which engine runs it: what the engine is handed at each step. */
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

/** When a flow's steps must be done, from when it began. */
interface FlowDeadlines {
  /** A step's: the flow's, or a browser flow's shorter one when a browser held it (its step was lost, and it resumes here). */
  flow: Deadline;
  /** A step a live browser holds: one invocation, which a Lambda runs for 15 minutes at most, waits out the flow's input. */
  browser: Deadline;
  /**
   * The same two for the engine's own waits (page loads, requests): in real time on the real clock,
   * since a time scale (local runs, tests) shortens the flow's bookkeeping, not how long a site takes.
   */
  engine: { flow: Deadline; browser: Deadline };
}

type InputOutcome = Extract<StepOutcome, { kind: "input" }>;

/** A login flow's LoginStep task state: discovery, or the step after the user's input. */
export function loginStepCore(deps: LoginStepDeps) {
  const clock = deps.now ?? (() => new Date());
  const clockMs = () => clock().getTime();
  const outcomes = loginOutcomes(deps);

  function deadlinesOf(connection: Connection, now: Date): FlowDeadlines {
    const began = Date.parse(connection.flow_started_at ?? now.toISOString());
    const limits = (deadlineAfter: (seconds: number) => Deadline) => {
      const browser = deadlineAfter(browserFlowTimeoutSeconds);
      return { browser, flow: connection.browser_session_id ? browser : deadlineAfter(flowTimeoutSeconds) };
    };
    return {
      ...limits((seconds) => Deadline.at(began + scaledMs(seconds, deps.timing), clockMs)),
      engine: limits((seconds) => Deadline.in(began + seconds * 1000 - now.getTime(), Date.now)),
    };
  }

  async function open<T>(connection: Connection, flowId: string, purpose: "engine_state" | "submission", sealed: string): Promise<T> {
    return JSON.parse(await deps.secrets.open(sealed, sealContext(connection, flowId, purpose))) as T;
  }

  /**
   * The code boxes that did not say their channel which the person answered with the current code of
   * the linked credential's TOTP secret: their channel is that authenticator, so re-auths answer them.
   */
  async function linkedTotpCodes(connection: Connection, submission: Submission): Promise<string[]> {
    const codes = unnamedCodeValues(promptOf(connection), submission);
    const name = connection.credential?.name;
    if (Object.keys(codes).length === 0 || !name) return [];
    const credential = await deps.credentials.forLogin(connection.org, name);
    return credential?.totpSecret ? totpCodeFields(codes, credential.totpSecret) : [];
  }

  /** `heldState`: the state of the step this invocation holds, which the record has sealed too. */
  async function runStep(connection: Connection, flowId: string, deadline: Deadline, heldState?: EngineState): Promise<StepOutcome | "no_submission"> {
    try {
      if (!connection.flow_engine_state) return await deps.engine.start(loginTarget(connection), deadline);
      if (!connection.flow_submission) return "no_submission";
      const state = heldState ?? (await open<EngineState>(connection, flowId, "engine_state", connection.flow_engine_state));
      const sealedSubmission = connection.flow_submission;
      const readSubmission = async () => {
        const submission = await open<Submission>(connection, flowId, "submission", sealedSubmission);
        return { submission, totpCodes: await linkedTotpCodes(connection, submission) };
      };
      // A held page that never reaches the engine is closed by nothing else.
      const { submission, totpCodes } = heldState ? await releasingOnError(heldState, readSubmission) : await readSubmission();
      return await deps.engine.submit(loginTarget(connection), state, submission, { deadline, ...(totpCodes.length > 0 ? { totpCodeFields: totpCodes } : {}) });
    } catch (error) {
      log.error("login step failed", { connectionId: connection.id, flowId, error: error instanceof Error ? error.name : "unknown" });
      return { kind: "failure", errorCode: "internal_error", message: "the login engine failed unexpectedly" };
    }
  }

  /** Records a step's outcome: the flow's end, or its wait for input, which a live browser's page waits out in this invocation. */
  async function follow(input: FlowExecutionInput, current: Connection, outcome: StepOutcome, deadlines: FlowDeadlines, stepDeadline: Deadline): Promise<LoginStepOutput> {
    if (outcome.kind === "success") {
      await outcomes.succeed(current, inFlow(input.flow_id), outcome);
      return ended(input);
    }
    if (outcome.kind === "failure") {
      // A step the flow's time limit cut short ran out of time, whatever the wait it was in said.
      if (stepDeadline.passed) {
        await outcomes.expire(current, input.flow_id, outcome.replayId ?? null);
        return ended(input);
      }
      await outcomes.fail(current, inFlow(input.flow_id), { ...failed(outcome.errorCode, outcome.message), replayId: outcome.replayId });
      return ended(input);
    }
    if (outcome.browserSessionId) return holdPage(input, current, outcome, deadlines);
    const inputDeadline = deadlines.flow.within(scaledMs(inputTimeoutSeconds, deps.timing));
    const waiting = await askUser(input, current, outcome, inputDeadline);
    return waiting ? inputWait(input, inputDeadline.remainingMs()) : ended(input);
  }

  /**
   * The browser holds the page, which no other invocation can reach: this one waits for the answer
   * and runs the next step itself. Every way out releases the browser (an error's included) but the
   * next step's, where the engine takes the page back.
   */
  async function holdPage(input: FlowExecutionInput, current: Connection, outcome: InputOutcome, deadlines: FlowDeadlines): Promise<LoginStepOutput> {
    const inputDeadline = deadlines.browser.within(scaledMs(inputTimeoutSeconds, deps.timing));
    const wait = await releasingOnError(outcome.state, async () => {
      const waiting = await askUser(input, current, outcome, inputDeadline);
      return waiting && { waiting, answer: await nextSubmission(input, inputDeadline) };
    });
    if (!wait) {
      await deps.engine.release(outcome.state);
      return ended(input);
    }
    const { waiting, answer } = wait;
    if (answer === "ended" || answer === "expired") {
      // A deleted connection's trace goes with it; an expired flow's is one people debug.
      const replayId = await deps.engine.release(outcome.state, answer === "expired");
      if (answer === "expired") await outcomes.expire(waiting, input.flow_id, replayId);
      return ended(input);
    }
    const next = await runStep(answer, input.flow_id, deadlines.engine.browser, outcome.state);
    if (next === "no_submission") throw new Error("a submission read from the record went missing");
    return follow(input, answer, next, deadlines, deadlines.engine.browser);
  }

  /** `work`'s answer; should it fail, the live browser `state` holds is released first. */
  async function releasingOnError<T>(state: EngineState, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      await deps.engine.release(state);
      throw error;
    }
  }

  /** Shows the step's prompt on the record until `deadline`: the record after, or undefined when the flow moved on. */
  async function askUser(input: FlowExecutionInput, current: Connection, outcome: InputOutcome, deadline: Deadline): Promise<Connection | undefined> {
    return deps.connections.guardedUpdate(
      current.org,
      current.id,
      inFlow(input.flow_id),
      awaitingInput({
        prompt: outcome.prompt,
        websiteError: outcome.websiteError,
        expiresAt: new Date(deadline.at).toISOString(),
        sealedState: await deps.secrets.seal(JSON.stringify(outcome.state), sealContext(current, input.flow_id, "engine_state")),
        browserSessionId: outcome.browserSessionId ?? null,
      }),
    );
  }

  /** Polls the record until a submission comes, the flow ends elsewhere (deleted, canceled), or `deadline` passes. */
  async function nextSubmission(input: FlowExecutionInput, deadline: Deadline): Promise<Connection | "ended" | "expired"> {
    for (;;) {
      // Read after the clock: a submission the route took before the expiry is still answered.
      const expired = deadline.passed;
      const connection = await currentFlow(deps.connections, input);
      if (!connection) return "ended";
      if (isSubmitted(connection) && connection.flow_submission) return connection;
      if (expired) return "expired";
      await deadline.sleep(deps.submissionPollMs ?? submissionPollMs);
    }
  }

  return {
    async loginStep(input: FlowExecutionInput): Promise<LoginStepOutput> {
      const connection = await currentFlow(deps.connections, input);
      if (!connection) return ended(input);
      const now = clock();
      const deadlines = deadlinesOf(connection, now);
      if (deadlines.flow.passed) {
        await outcomes.expire(connection, input.flow_id);
        return ended(input);
      }
      const outcome = await runStep(connection, input.flow_id, deadlines.engine.flow);
      if (outcome === "no_submission") return inputWait(input, Date.parse(connection.flow_expires_at ?? "") - now.getTime());
      return follow(input, connection, outcome, deadlines, deadlines.engine.flow);
    },
  };
}

const ended = (input: FlowExecutionInput): LoginStepOutput => ({ ...input, next: "end" });

/** Step Functions waits for the input, as long as `ms`. */
const inputWait = (input: FlowExecutionInput, ms: number): LoginStepOutput => ({ ...input, next: "await_input", input_timeout_seconds: timeoutSeconds(ms) });

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
