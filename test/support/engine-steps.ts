import { expect } from "vitest";
import type { LoginEngine, LoginTarget, StepOutcome, Submission } from "#shared/login/types.ts";

export type Input = Extract<StepOutcome, { kind: "input" }>;
export type Success = Extract<StepOutcome, { kind: "success" }>;

export function asInput(outcome: StepOutcome): Input {
  expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: "input" });
  return outcome as Input;
}

export function asSuccess(outcome: StepOutcome): Success {
  expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: "success" });
  return outcome as Success;
}

/** Answers a step with its state through JSON, as the state goes between the steps of a flow. */
export function submitThroughJson(engine: LoginEngine, target: LoginTarget, step: Input, submission: Submission): Promise<StepOutcome> {
  return engine.submit(target, JSON.parse(JSON.stringify(step.state)), submission);
}
