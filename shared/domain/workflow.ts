import type { FlowExecutionInput, WorkflowState } from "../workflow/definition.ts";

/** Starts and stops the per-connection executions (Step Functions in AWS and locally). */
export interface WorkflowEngine {
  executionArn(name: string): string;
  start(name: string, input: WorkflowState | FlowExecutionInput): Promise<string>;
  /** Succeeds when the execution is stopped or was not running. */
  stop(executionArn: string): Promise<void>;
}

/** Execution names: the connection id, then one suffix per continuation or restart. */
export function executionName(connectionId: string, generation: number): string {
  return generation === 0 ? connectionId : `${connectionId}-g${generation}`;
}

export interface WorkflowTiming {
  /** Multiplies every wait (local runs and tests); 1 in AWS. */
  timeScale: number;
  maxIterations: number;
  maxAgeDays: number;
}

/** A wait of `seconds` in milliseconds, as this deployment runs it (scaled down locally). */
export function scaledMs(seconds: number, timing: Pick<WorkflowTiming, "timeScale">): number {
  return seconds * 1000 * timing.timeScale;
}

export function nextCheckAt(now: Date, intervalSeconds: number, timing: Pick<WorkflowTiming, "timeScale">): string {
  return new Date(now.getTime() + scaledMs(intervalSeconds, timing)).toISOString();
}
