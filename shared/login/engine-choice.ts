import type { StorageState } from "../archive/storage-state.ts";
import type { SessionEvidence } from "./types.ts";
import { durableAnswer, submissionProblem } from "./submission.ts";
import type { Deadline } from "../deadline.ts";
import { loginEngineKinds, type EngineState, type LoginEngine, type LoginEngineKind, type LoginTarget, type StepOptions, type StepOutcome, type Submission } from "./types.ts";

/**
 * Which engine runs a flow, kept beside that engine's own state, with the credential ref (identifier,
 * password) of each field id asked so far: a flow moved to the browser mid-way answers the values of
 * the submission that moved it by ref, since the browser's fields have ids of their own.
 */
interface ChoiceState {
  engine: LoginEngineKind;
  inner: EngineState;
  refsById: Record<string, string>;
  /** The identity provider of each SSO button shown so far, by its selector: a browser's selectors for the same buttons differ. */
  ssoBySelector?: Record<string, string>;
}

/**
 * The HTTP engine first, where it works (fast and cheap), and the browser engine where it meets what
 * only a browser can go on with; a connection that logged in with the browser stays with it for its
 * health checks and re-auths (`target.engine`). The rule is written out in docs/login-engines.md.
 */
export function chooseLoginEngine(engines: Record<LoginEngineKind, LoginEngine>): LoginEngine {
  function tagged(engine: LoginEngineKind, outcome: StepOutcome, refsById: Record<string, string>): StepOutcome {
    if (outcome.kind !== "input") return outcome;
    const refs = { ...refsById, ...Object.fromEntries(outcome.prompt.fields.map((field) => [field.id, field.ref])) };
    const ssoBySelector = Object.fromEntries(outcome.prompt.pending_sso_buttons.map((button) => [button.selector, button.provider]));
    const state: ChoiceState = { engine, inner: outcome.state, refsById: refs, ssoBySelector };
    return { ...outcome, state: state as unknown as EngineState };
  }

  /**
   * The browser's own steps, answered with the durable values given so far for as long as they are
   * all it asks, and with `choice` (one only the page's script acts on) on the first step that
   * offers it; values of a stored credential stay bound to its domain (`options.credentialDomain`),
   * and every step to the submission's deadline.
   */
  async function continueInBrowser(
    target: LoginTarget,
    valuesByRef: Record<string, string>,
    refsById: Record<string, string>,
    options: StepOptions | undefined,
    choice: Submission | null,
  ): Promise<StepOutcome> {
    let outcome = await engines.browser.start(target, options?.deadline);
    const answered = new Set<string>();
    let pending = choice;
    while (outcome.kind === "input") {
      if (pending && submissionProblem(outcome.prompt, pending) === null) {
        const again = pending;
        pending = null;
        outcome = await engines.browser.submit(target, outcome.state, again, options);
        continue;
      }
      const asked = outcome.prompt.fields;
      // A step asking again for what was just given has refused it: the person answers from here.
      const submission = asked.some((field) => answered.has(field.ref)) ? null : durableAnswer(asked, valuesByRef);
      if (!submission) break;
      for (const field of asked) answered.add(field.ref);
      outcome = await engines.browser.submit(target, outcome.state, submission, options);
    }
    return tagged("browser", outcome, refsById);
  }

  function readChoice(state: EngineState): ChoiceState {
    const choice = state as unknown as Partial<ChoiceState>;
    // A flow begun before engines were chosen holds the HTTP engine's state as it is.
    if (choice.engine === undefined && choice.inner === undefined) return { engine: "http", inner: state, refsById: {} };
    if (!loginEngineKinds.includes(choice.engine as LoginEngineKind) || typeof choice.inner !== "object" || choice.inner === null) {
      throw new Error("the flow's saved state does not say which engine runs it");
    }
    return { engine: choice.engine as LoginEngineKind, inner: choice.inner, refsById: choice.refsById ?? {}, ssoBySelector: choice.ssoBySelector ?? {} };
  }

  return {
    async start(target: LoginTarget, deadline?: Deadline): Promise<StepOutcome> {
      if (target.engine === "browser") return tagged("browser", await engines.browser.start(target, deadline), {});
      const outcome = await engines.http.start(target, deadline);
      if (outcome.kind === "failure" && outcome.browserMayHelp) return tagged("browser", await engines.browser.start(target, deadline), {});
      return tagged("http", outcome, {});
    },

    async submit(target: LoginTarget, state: EngineState, submission: Submission, options?: StepOptions): Promise<StepOutcome> {
      const choice = readChoice(state);
      const outcome = await engines[choice.engine].submit(target, choice.inner, submission, options);
      if (choice.engine === "http" && outcome.kind === "failure" && outcome.browserMayHelp) {
        const valuesByRef = Object.fromEntries(
          Object.entries(submission.field_values ?? {}).flatMap(([id, value]) => (choice.refsById[id] ? [[choice.refsById[id], value]] : [])),
        );
        return continueInBrowser(target, valuesByRef, choice.refsById, options, choiceAgain(submission, choice.ssoBySelector ?? {}));
      }
      return tagged(choice.engine, outcome, choice.refsById);
    },

    probe(target: LoginTarget, session: StorageState, postLoginUrl: string, evidence: SessionEvidence | null) {
      return engines[target.engine ?? "http"].probe(target, session, postLoginUrl, evidence);
    },

    async release(state: EngineState, keepReplay?: boolean): Promise<string | null> {
      const choice = readChoice(state);
      return engines[choice.engine].release(choice.inner, keepReplay);
    },
  };
}

/**
 * The choice a submission made, as a browser's step of the same page is asked for it again: an
 * identity provider by name (a button's selector is the HTTP engine's own), other choices by id.
 */
function choiceAgain(submission: Submission, ssoBySelector: Record<string, string>): Submission | null {
  const provider = submission.sso_provider ?? (submission.sso_button_selector === undefined ? undefined : ssoBySelector[submission.sso_button_selector]);
  if (provider) return { sso_provider: provider.toLowerCase() };
  const { selected_choice_id, mfa_option_id, sign_in_option_id } = submission;
  if (selected_choice_id) return { selected_choice_id };
  if (mfa_option_id) return { mfa_option_id };
  if (sign_in_option_id) return { sign_in_option_id };
  return null;
}
