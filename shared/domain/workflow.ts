import type { Connection, ConnectionStore } from "./connection.ts";

/** The input an execution starts with, and the state each loop iteration carries. */
export interface WorkflowState {
  org: string;
  connection_id: string;
  /** Counts the executions this connection has continued into; names them uniquely. */
  generation: number;
  iteration: number;
  next_check_at: string;
}

/** The input of a login flow's execution (the `Start` state tells it from a health-check loop by `flow_id`). */
export interface FlowExecutionInput {
  org: string;
  connection_id: string;
  flow_id: string;
}

/** Answers to the resumable step waiting for input (SendTaskSuccess in Step Functions). */
export interface FlowSignal {
  resume(taskToken: string): Promise<void>;
}

/** Starts and stops the per-connection executions (Step Functions in AWS and locally). */
export interface WorkflowEngine {
  executionArn(name: string): string;
  /**
   * Idempotent by name: when an execution of that name was already started (running, or ended,
   * or with other input), its ARN is returned and no second one starts. Every name is derived
   * from a connection id, so an execution of that name was started for that connection.
   */
  start(name: string, input: WorkflowState | FlowExecutionInput): Promise<string>;
  /** Succeeds when the execution is stopped or was not running. */
  stop(executionArn: string): Promise<void>;
}

/** Execution names: the connection id, then one suffix per continuation or restart. */
export function executionName(connectionId: string, generation: number): string {
  return generation === 0 ? connectionId : `${connectionId}-g${generation}`;
}

/**
 * The input of a connection's first execution, derived from the record alone, so a repeated start
 * (a retry, or a later repair) asks Step Functions for the same execution.
 */
export function firstExecutionInput(connection: Connection, timing: Pick<WorkflowTiming, "timeScale">): WorkflowState {
  return {
    org: connection.org,
    connection_id: connection.id,
    generation: 0,
    iteration: 0,
    next_check_at: nextCheckAt(new Date(connection.created_at), connection.health_check_interval, timing),
  };
}

/**
 * Starts the connection's first execution and clears `workflow_start_pending`: create calls it, and
 * so does whatever next touches a record still marked, which a failed or interrupted create left
 * without its workflow. The start is idempotent by name, so concurrent callers share one
 * execution. If the record was deleted (or handed to a newer execution) meanwhile, a delete could
 * not stop an execution that did not exist yet, so it is stopped here.
 */
export async function startFirstExecution(
  deps: { connections: Pick<ConnectionStore, "markWorkflowStarted">; workflow: WorkflowEngine; timing: Pick<WorkflowTiming, "timeScale"> },
  connection: Connection,
): Promise<void> {
  const name = executionName(connection.id, 0);
  await deps.workflow.start(name, firstExecutionInput(connection, deps.timing));
  const arn = deps.workflow.executionArn(name);
  if (!(await deps.connections.markWorkflowStarted(connection.org, connection.id, arn))) await deps.workflow.stop(arn);
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
