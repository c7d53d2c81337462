import { describe, expect, it } from "vitest";
import { s3Archives } from "#shared/composition/s3-archives.ts";
import { connectionStore } from "#shared/composition/table.ts";
import { workflowEngine } from "#shared/composition/workflow-engine.ts";
import { loadConfig } from "#shared/config.ts";

/** What the stack sets for every function (test/infra/stack.test.ts checks it does). */
const deployed = {
  DEPLOYMENT_MODE: "aws",
  TABLE_NAME: "AuthConnectionService-Table-1A2B3C",
  BUCKET_NAME: "authconnectionservice-profiles-4d5e6f",
  STATE_MACHINE_ARN: "arn:aws:states:eu-west-1:123456789012:stateMachine:ConnectionWorkflow-7g8h9i",
};

const without = (name: keyof typeof deployed) => Object.fromEntries(Object.entries(deployed).filter(([setting]) => setting !== name));

describe("the table, bucket and state machine a deployment points at", () => {
  it.each([
    ["TABLE_NAME", (env: Record<string, string>) => connectionStore(loadConfig(env))],
    ["BUCKET_NAME", (env: Record<string, string>) => s3Archives(loadConfig(env))],
    ["STATE_MACHINE_ARN", (env: Record<string, string>) => workflowEngine(loadConfig(env))],
  ] as const)("in AWS mode, without %s, fail as the process builds what uses it, naming the variable", (name, build) => {
    expect(() => build(without(name))).toThrow(new RegExp(`invalid configuration: ${name} is not set`));
    expect(() => build(deployed)).not.toThrow();
  });

  it("in AWS mode are the ones the stack names", () => {
    expect(workflowEngine(loadConfig(deployed)).executionArn("ac_1-0")).toBe(
      "arn:aws:states:eu-west-1:123456789012:execution:ConnectionWorkflow-7g8h9i:ac_1-0",
    );
  });

  it("in local mode default to what npm start creates", () => {
    expect(loadConfig({ DEPLOYMENT_MODE: "local" })).toMatchObject({
      TABLE_NAME: "auth-connections",
      BUCKET_NAME: "auth-connection-profiles",
      STATE_MACHINE_ARN: "arn:aws:states:us-east-1:000000000000:stateMachine:connection-workflow",
    });
    expect(loadConfig({ DEPLOYMENT_MODE: "local", TABLE_NAME: "test-table" }).TABLE_NAME).toBe("test-table");
  });
});
