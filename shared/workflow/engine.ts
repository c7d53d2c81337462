import { jsonServiceClient, type JsonServiceClient } from "../aws/json-protocol.ts";
import { AwsServiceError } from "../aws/signed-requests.ts";
import type { FlowSignal } from "../domain/login-flows.ts";
import type { WorkflowEngine } from "../domain/workflow.ts";
import type { FlowExecutionInput, WorkflowState } from "./definition.ts";

export function createSfnClient(settings: { region: string; endpoint?: string }): JsonServiceClient {
  return jsonServiceClient({
    service: "states",
    targetPrefix: "AWSStepFunctions",
    jsonVersion: "1.0",
    region: settings.region,
    endpoint: settings.endpoint,
  });
}

const errorCode = (error: unknown) => (error instanceof AwsServiceError ? error.code : undefined);

/** Executions are named, so an execution's ARN is known before it starts. */
export function executionArn(stateMachineArn: string, name: string): string {
  return `${stateMachineArn.replace(":stateMachine:", ":execution:")}:${name}`;
}

/** The workflow port over Step Functions: the same adapter in AWS and against the local endpoint. */
export function sfnWorkflowEngine(sfn: JsonServiceClient, stateMachineArn: string): WorkflowEngine {
  return {
    executionArn: (name) => executionArn(stateMachineArn, name),

    async start(name: string, input: WorkflowState | FlowExecutionInput) {
      const result = await sfn.call<{ executionArn?: string }>("StartExecution", { stateMachineArn, name, input: JSON.stringify(input) });
      return result.executionArn ?? executionArn(stateMachineArn, name);
    },

    async stop(arn: string) {
      try {
        await sfn.call("StopExecution", { executionArn: arn, cause: "auth connection deleted" });
      } catch (error) {
        // Already gone (never started, finished or stopped): the goal, no execution running, holds.
        if (errorCode(error) !== "ExecutionDoesNotExist") throw error;
      }
    },
  };
}

/** Resumes a step waiting with `.waitForTaskToken`; a token whose task ended (expired, stopped) is left alone. */
export function sfnFlowSignal(sfn: JsonServiceClient): FlowSignal {
  return {
    async resume(taskToken: string) {
      try {
        await sfn.call("SendTaskSuccess", { taskToken, output: "{}" });
      } catch (error) {
        const code = errorCode(error);
        if (code !== "TaskDoesNotExist" && code !== "TaskTimedOut" && code !== "InvalidToken") throw error;
      }
    },
  };
}
