import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StateMachineDoesNotExist,
  StopExecutionCommand,
  TaskDoesNotExist,
  type SFNClient,
} from "@aws-sdk/client-sfn";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { officialSfnClient } from "../support/official-sfn.ts";
import { startLocalStepFunctions, type LocalStepFunctions } from "../../infra/local/step-functions.ts";

const stateMachineArn = "arn:aws:states:us-east-1:000000000000:stateMachine:protocol-test";
let local: LocalStepFunctions;
let sfn: SFNClient;

beforeAll(async () => {
  local = await startLocalStepFunctions({ stateMachineArn, timeScale: 1 });
  sfn = officialSfnClient(local.endpoint);
});

afterAll(async () => {
  await local?.stop();
});

// An hour ahead: the execution waits in its first state and runs no task. (Much further, and the
// wait overflows Node's timer, which then fires at once.)
const waitingInput = JSON.stringify({
  org: "o",
  connection_id: "ac_x",
  generation: 0,
  iteration: 0,
  next_check_at: new Date(Date.now() + 60 * 60 * 1000).toISOString(),
});

describe("the local Step Functions endpoint, through the AWS SDK", () => {
  it("starts idempotently by name and input, and refuses the same name with other input", async () => {
    const first = await sfn.send(new StartExecutionCommand({ stateMachineArn, name: "same-name", input: waitingInput }));
    const again = await sfn.send(new StartExecutionCommand({ stateMachineArn, name: "same-name", input: waitingInput }));
    const described = await sfn.send(new DescribeExecutionCommand({ executionArn: first.executionArn }));

    expect(again.executionArn).toBe(first.executionArn);
    expect(described).toMatchObject({ status: "RUNNING", name: "same-name", input: waitingInput, stateMachineArn });
    expect(described.startDate).toBeInstanceOf(Date);
    await expect(
      sfn.send(new StartExecutionCommand({ stateMachineArn, name: "same-name", input: "{}" })),
    ).rejects.toBeInstanceOf(ExecutionAlreadyExists);
  });

  it("keeps an ended execution's name, as Step Functions does: the same name and input is refused", async () => {
    const started = await sfn.send(new StartExecutionCommand({ stateMachineArn, name: "ended-name", input: waitingInput }));
    await sfn.send(new StopExecutionCommand({ executionArn: started.executionArn }));

    await expect(
      sfn.send(new StartExecutionCommand({ stateMachineArn, name: "ended-name", input: waitingInput })),
    ).rejects.toBeInstanceOf(ExecutionAlreadyExists);
  });

  it("answers the protocol's own errors for unknown machines, executions and task tokens", async () => {
    await expect(sfn.send(new StartExecutionCommand({ stateMachineArn: `${stateMachineArn}-other`, input: "{}" }))).rejects.toBeInstanceOf(
      StateMachineDoesNotExist,
    );
    await expect(sfn.send(new DescribeExecutionCommand({ executionArn: `${stateMachineArn}:nope` }))).rejects.toBeInstanceOf(ExecutionDoesNotExist);
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: "unknown", output: "{}" }))).rejects.toBeInstanceOf(TaskDoesNotExist);
  });

  it("settles a waiting task token with SendTaskSuccess or SendTaskFailure", async () => {
    const succeeding = local.awaitTaskToken();
    const failing = local.awaitTaskToken();
    // Settled outcomes are taken before the calls, so the failure is never an unhandled rejection.
    const outcomes = Promise.allSettled([succeeding.result, failing.result]);

    await sfn.send(new SendTaskSuccessCommand({ taskToken: succeeding.token, output: JSON.stringify({ submitted: true }) }));
    await sfn.send(new SendTaskFailureCommand({ taskToken: failing.token, error: "FlowCanceled", cause: "deleted" }));

    const [succeeded, failed] = await outcomes;
    expect(succeeded).toEqual({ status: "fulfilled", value: { submitted: true } });
    expect(failed).toMatchObject({ status: "rejected", reason: { name: "FlowCanceled", message: "deleted" } });
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: succeeding.token, output: "{}" }))).rejects.toBeInstanceOf(TaskDoesNotExist);
  });
});
