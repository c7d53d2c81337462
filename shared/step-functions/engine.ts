import { ExecutionAlreadyExists, ExecutionDoesNotExist, InvalidToken, SendTaskSuccessCommand, StartExecutionCommand, StopExecutionCommand, TaskDoesNotExist, TaskTimedOut, type SFNClient } from "@aws-sdk/client-sfn";
import type { FlowExecutionInput, FlowSignal, WorkflowEngine, WorkflowState } from "../domain/workflow.ts";

/** Executions are named, so an execution's ARN is known before it starts. */
export function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(":stateMachine:", ":execution:")}:${name}`;
}

/** The workflow port over Step Functions: the same adapter in AWS and against the local endpoint. */
export function sfnWorkflowEngine(sfn: SFNClient, stateMachineArn: string): WorkflowEngine {
  return {
    executionArn: (name) => executionArn(stateMachineArn, name),

    async start(name: string, input: WorkflowState | FlowExecutionInput) {
      try {
        const result = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) }));
        return result.executionArn ?? executionArn(stateMachineArn, name);
      } catch (error) {
        // Step Functions answers the same name and input of a running execution with that execution,
        // and anything else of a name it has seen (ended, or other input) with this error: either
        // way that name's execution was started, which is all a start by name asks for.
        if (error instanceof ExecutionAlreadyExists) return executionArn(stateMachineArn, name);
        throw error;
      }
    },

    async stop(arn: string) {
      try {
        await sfn.send(new StopExecutionCommand({ executionArn: arn, cause: "auth connection deleted" }));
      } catch (error) {
        // Already gone (never started, finished or stopped): the goal, no execution running, holds.
        if (!(error instanceof ExecutionDoesNotExist)) throw error;
      }
    },
  };
}

/** Resumes a step waiting with `.waitForTaskToken`; a token whose task ended (expired, stopped) is left alone. */
export function sfnFlowSignal(sfn: SFNClient): FlowSignal {
  return {
    async resume(taskToken: string) {
      try {
        await sfn.send(new SendTaskSuccessCommand({ taskToken, output: "{}" }));
      } catch (error) {
        if (!(error instanceof TaskDoesNotExist || error instanceof TaskTimedOut || error instanceof InvalidToken)) throw error;
      }
    },
  };
}
