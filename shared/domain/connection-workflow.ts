import { newId } from "../ids.ts";
import type { WorkflowState } from "../workflow/definition.ts";
import type { Connection, ConnectionStore } from "./connection.ts";
import { executionName, nextCheckAt, type WorkflowEngine, type WorkflowTiming } from "./workflow.ts";

export interface HealthCheckTaskInput {
  org: string;
  connection_id: string;
  generation: number;
  iteration: number;
  execution_id: string;
  execution_started_at: string;
}

/** The task's answer: the next loop state, and which way the workflow goes. */
export type HealthCheckTaskOutput = WorkflowState & { next: "wait" | "continue_as_new" | "end" };

export interface ContinueAsNewTaskInput {
  org: string;
  connection_id: string;
  generation: number;
  next_check_at: string;
  execution_id: string;
}

export interface HealthCheckDeps {
  connections: ConnectionStore;
  timing: WorkflowTiming;
  timelineRetentionDays: number;
  now?: () => Date;
}

/** Only handing the loop to a new execution needs the engine. */
export interface ContinuationDeps {
  connections: ConnectionStore;
  engine: WorkflowEngine;
  timing: Pick<WorkflowTiming, "timeScale">;
  now?: () => Date;
}

const dayMs = 24 * 60 * 60 * 1000;

/** The workflow's HealthCheck task state (functions/workflow/health-check.ts). */
export function healthCheckCore(deps: HealthCheckDeps) {
  const clock = deps.now ?? (() => new Date());

  /**
   * Until a login has succeeded there is no session to probe: the check says so and records
   * NEEDS_AUTH, rather than inventing a result.
   */
  function checkSession(connection: Connection): { status: Connection["status"]; error_code?: string; error_message?: string } {
    if (connection.last_auth_at === null) {
      return { status: "NEEDS_AUTH", error_code: "no_session", error_message: "no successful login yet: there is no session to check" };
    }
    return { status: connection.status };
  }

  return {
    async healthCheck(input: HealthCheckTaskInput): Promise<HealthCheckTaskOutput> {
      const now = clock();
      const loop = { org: input.org, connection_id: input.connection_id, generation: input.generation, iteration: input.iteration + 1 };
      const ended: HealthCheckTaskOutput = { ...loop, next_check_at: now.toISOString(), next: "end" };
      const connection = await deps.connections.get(input.org, input.connection_id);
      if (!connection || connection.execution_arn !== input.execution_id) return ended;
      if (connection.health_checks) {
        const checkedAt = now.toISOString();
        const outcome = checkSession(connection);
        const recorded = await deps.connections.recordHealthCheck(input.org, input.connection_id, input.execution_id, {
          status: outcome.status,
          checkedAt,
          eventExpiresAt: Math.floor((now.getTime() + deps.timelineRetentionDays * dayMs) / 1000),
          event: {
            id: newId("ev"),
            type: "health_check",
            status: outcome.status,
            timestamp: checkedAt,
            previous_status: connection.status,
            ...(outcome.error_code ? { error_code: outcome.error_code } : {}),
            ...(outcome.error_message ? { error_message: outcome.error_message } : {}),
          },
        });
        if (!recorded) return ended;
      }
      const age = now.getTime() - Date.parse(input.execution_started_at);
      const due = loop.iteration >= deps.timing.maxIterations || age >= deps.timing.maxAgeDays * dayMs;
      return {
        ...loop,
        next_check_at: nextCheckAt(now, connection.health_check_interval, deps.timing),
        next: due ? "continue_as_new" : "wait",
      };
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

