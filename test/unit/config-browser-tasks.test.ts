import { describe, expect, it } from "vitest";
import { loadConfig } from "#shared/config.ts";

const deployed = {
  BROWSER_CLUSTER_ARN: "arn:aws:ecs:eu-west-1:123456789012:cluster/AuthConnectionService-BrowserTasksCluster1A2B3C4D-abcdEFGH1234",
  BROWSER_TASK_DEFINITION_ARN: "arn:aws:ecs:eu-west-1:123456789012:task-definition/AuthConnectionServiceBrowserTasksTask5E6F7A8B:3",
  BROWSER_SUBNETS: "subnet-0a1b2c3d4e5f60718,subnet-0f1e2d3c4b5a69788",
  BROWSER_SECURITY_GROUP: "sg-0123456789abcdef0",
  BROWSER_CONTAINER_NAME: "Browser",
};

describe("browser task settings (AWS mode with pools)", () => {
  it("are all optional, as a stack without pools sets none of them", () => {
    const config = loadConfig({});

    expect([config.BROWSER_CLUSTER_ARN, config.BROWSER_TASK_DEFINITION_ARN, config.BROWSER_SUBNETS, config.BROWSER_SECURITY_GROUP, config.BROWSER_CONTAINER_NAME]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("take what the stack passes, the subnets as a list", () => {
    const config = loadConfig({ ...deployed, BROWSER_SUBNETS: " subnet-0a1b2c3d4e5f60718 , subnet-0f1e2d3c4b5a69788" });

    expect(config).toMatchObject({ ...deployed, BROWSER_SUBNETS: ["subnet-0a1b2c3d4e5f60718", "subnet-0f1e2d3c4b5a69788"] });
  });

  it.each([
    ["BROWSER_CLUSTER_ARN", "AuthConnectionService-BrowserTasksCluster"],
    ["BROWSER_TASK_DEFINITION_ARN", "arn:aws:ecs:eu-west-1:123456789012:task-definition/Browser"],
    ["BROWSER_SUBNETS", "subnet-0a1b2c3d4e5f60718,,subnet-0f1e2d3c4b5a69788"],
    ["BROWSER_SECURITY_GROUP", "sg-0123 sg-4567"],
    ["BROWSER_CONTAINER_NAME", ""],
  ])("refuse a malformed %s", (name, value) => {
    expect(() => loadConfig({ ...deployed, [name]: value })).toThrow(new RegExp(name));
  });
});
