import { createRequire } from "node:module";
import { StateMachine } from "aws-local-stepfunctions";
import { describe, expect, it } from "vitest";
import { definitionText, substitutedDefinition, workflowTasks } from "#shared/step-functions/definition.ts";

type EventLog = { type: string; state?: { name: string } };

// asl-validator ships no types: this is the part of its API used here.
const aslValidator = createRequire(import.meta.url)("asl-validator") as (definition: unknown) => {
  isValid: boolean;
  errorsText(): string;
};

const arns = Object.fromEntries(
  Object.values(workflowTasks).map((task) => [task.placeholder, `arn:aws:lambda:us-east-1:123456789012:function:${task.functionName}`]),
);
const definition = substitutedDefinition(arns) as { States: Record<string, { Type: string }> };

describe("the connection workflow definition", () => {
  it("is valid Amazon States Language", () => {
    const { isValid, errorsText } = aslValidator(definition);

    expect(errorsText()).toBe("");
    expect(isValid).toBe(true);
  });

  it("has exactly the task states of the task map, each with its placeholder", () => {
    const taskStates = Object.entries(definition.States).filter(([, state]) => state.Type === "Task").map(([name]) => name);

    expect(taskStates.sort()).toEqual(Object.keys(workflowTasks).sort());
    for (const task of Object.values(workflowTasks)) expect(definitionText()).toContain(`\${${task.placeholder}}`);
  });

  it("makes three state transitions per loop iteration", async () => {
    const iterations = 4;
    let checks = 0;
    const machine = new StateMachine(definition as unknown as ConstructorParameters<typeof StateMachine>[0]);
    const execution = machine.run(
      { org: "o", connection_id: "ac_1", generation: 0, iteration: 0, next_check_at: new Date().toISOString() },
      {
        overrides: {
          taskResourceLocalHandlers: {
            HealthCheck: async () => {
              checks++;
              const next = checks < iterations ? "wait" : "end";
              return { Payload: { org: "o", connection_id: "ac_1", generation: 0, iteration: checks, next_check_at: new Date().toISOString(), next } };
            },
          },
        },
        context: { Execution: { Id: "arn:aws:states:us-east-1:123456789012:execution:m:ac_1", StartTime: new Date().toISOString() } },
      },
    );
    const entered: string[] = [];
    for await (const event of execution.eventLogs as AsyncGenerator<EventLog>) {
      if (event.type === "StateEntered" && event.state) entered.push(event.state.name);
    }

    // The execution enters Start once; each iteration enters WaitForNextCheck, HealthCheck and
    // NextStep; the last also enters the end state.
    expect(entered).toHaveLength(1 + 3 * iterations + 1);
    expect(entered[0]).toBe("Start");
    expect(entered.slice(1, 4)).toEqual(["WaitForNextCheck", "HealthCheck", "NextStep"]);
    expect(entered.at(-1)).toBe("ConnectionGone");
  });

  it("waits out a rate-limited re-auth until its retry_at, then checks again before any new re-auth", async () => {
    const retryAt = new Date(Date.now() + 50).toISOString();
    const loop = { org: "o", connection_id: "ac_1", generation: 0, next_check_at: new Date().toISOString() };
    let checks = 0;
    const machine = new StateMachine(definition as unknown as ConstructorParameters<typeof StateMachine>[0]);
    const execution = machine.run(
      { ...loop, iteration: 0 },
      {
        overrides: {
          taskResourceLocalHandlers: {
            HealthCheck: async () => ({ Payload: { ...loop, iteration: ++checks, next: checks === 1 ? "reauth" : "end" } }),
            Reauth: async () => ({ Payload: { ...loop, iteration: checks, next: "wait_out_rate_limit", retry_at: retryAt } }),
          },
        },
        context: { Execution: { Id: "arn:aws:states:us-east-1:123456789012:execution:m:ac_1", StartTime: new Date().toISOString() } },
      },
    );
    const entered: string[] = [];
    for await (const event of execution.eventLogs as AsyncGenerator<EventLog>) {
      if (event.type === "StateEntered" && event.state) entered.push(event.state.name);
    }

    expect(entered).toEqual(["Start", "WaitForNextCheck", "HealthCheck", "NextStep", "Reauth", "NextStep", "WaitOutRateLimit", "HealthCheck", "NextStep", "ConnectionGone"]);
    expect((definition.States.WaitOutRateLimit as unknown as { TimestampPath: string }).TimestampPath).toBe("$.retry_at");
  });
});
