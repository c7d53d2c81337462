import { ArnFormat, Duration, RemovalPolicy, Stack } from "aws-cdk-lib";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from "aws-cdk-lib/aws-stepfunctions";
import { Construct } from "constructs";
import { definitionText, workflowTasks, type WorkflowTask, type WorkflowTaskState } from "#shared/step-functions/definition.ts";
import { acknowledgeWildcard } from "./nag.ts";
import { ServiceFunction, type FunctionResources } from "./service-function.ts";

/**
 * The state machine's ARNs from its fixed name: route functions need them, and the state machine
 * needs the task functions, so referring to the resource itself would make a dependency cycle.
 */
export function workflowArns(scope: Construct, stateMachineName: string): { stateMachineArn: string; executionsArn: string } {
  const stack = Stack.of(scope);
  const arn = (resource: string, resourceName: string) =>
    stack.formatArn({ service: "states", resource, resourceName, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
  return { stateMachineArn: arn("stateMachine", stateMachineName), executionsArn: arn("execution", `${stateMachineName}:*`) };
}

export interface ConnectionWorkflowProps {
  stateMachineName: string;
  resources: FunctionResources;
}

/** The connection workflow: the shared ASL file, with the ARN of each task's function substituted. */
export class ConnectionWorkflow extends Construct {
  readonly stateMachine: StateMachine;
  readonly tasks: Record<WorkflowTaskState, ServiceFunction>;

  constructor(scope: Construct, id: string, props: ConnectionWorkflowProps) {
    super(scope, id);
    const taskStates = Object.keys(workflowTasks) as WorkflowTaskState[];
    this.tasks = Object.fromEntries(
      taskStates.map((state) => {
        const task: WorkflowTask = workflowTasks[state];
        const fn = new ServiceFunction(this, task.functionName, {
          handler: task.handler,
          description: `${state} task: ${task.handler}`,
          grants: task.grants,
          resources: props.resources,
          timeout: Duration.seconds(task.timeoutSeconds ?? 60),
          runsBrowser: task.runsBrowser,
        });
        return [state, fn];
      }),
    ) as Record<WorkflowTaskState, ServiceFunction>;

    this.stateMachine = new StateMachine(this, "StateMachine", {
      stateMachineName: props.stateMachineName,
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(definitionText()),
      definitionSubstitutions: Object.fromEntries(taskStates.map((state) => [workflowTasks[state].placeholder, this.tasks[state].function.functionArn])),
      tracingEnabled: true,
      logs: {
        destination: new LogGroup(this, "Logs", { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
        level: LogLevel.ALL,
        // States and transitions are logged, payloads are not: no secret in any log, whatever a task returns.
        includeExecutionData: false,
      },
    });
    for (const task of Object.values(this.tasks)) {
      task.function.grantInvoke(this.stateMachine);
      acknowledgeWildcard(this.stateMachine, `${task.function.functionArn}:*`, "CDK's invoke grant also covers the task function's versions and aliases; no other function.");
    }
    acknowledgeWildcard(this.stateMachine, "*", "Step Functions log delivery and X-Ray tracing actions accept no resource but '*'.");
  }
}
