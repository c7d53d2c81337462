import { describe, expect, it } from "vitest";
import { browsers, noAwsBrowsers } from "#shared/composition/browsers.ts";
import { loadConfig } from "#shared/config.ts";

const deployed = {
  BROWSER_CLUSTER_ARN: "arn:aws:ecs:eu-west-1:123456789012:cluster/AuthConnectionService-BrowserTasksCluster1A2B3C4D-abcdEFGH1234",
  BROWSER_TASK_DEFINITION_ARN: "arn:aws:ecs:eu-west-1:123456789012:task-definition/AuthConnectionServiceBrowserTasksTask5E6F7A8B:3",
  BROWSER_SUBNETS: "subnet-0a1b2c3d4e5f60718,subnet-0f1e2d3c4b5a69788",
  BROWSER_SECURITY_GROUP: "sg-0123456789abcdef0",
  BROWSER_CONTAINER_NAME: "Browser",
  BROWSER_ROUTER_URL: "https://d111111abcdef8.cloudfront.net",
  BROWSER_ADMIN_KEY_ID: "arn:aws:kms:eu-west-1:123456789012:key/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9",
};

describe("browser task settings (AWS mode with pools)", () => {
  it("are all optional, as a stack without pools sets none of them", () => {
    const config = loadConfig({});

    expect(Object.keys(deployed).map((name) => config[name as keyof typeof deployed])).toEqual(Object.keys(deployed).map(() => undefined));
    expect(config.BROWSER_ASSIGN_PUBLIC_IP).toBe(false);
  });

  it("take what the stack passes, the subnets as a list", () => {
    const config = loadConfig({ ...deployed, BROWSER_SUBNETS: " subnet-0a1b2c3d4e5f60718 , subnet-0f1e2d3c4b5a69788", BROWSER_ASSIGN_PUBLIC_IP: "true" });

    expect(config).toMatchObject({ ...deployed, BROWSER_SUBNETS: ["subnet-0a1b2c3d4e5f60718", "subnet-0f1e2d3c4b5a69788"], BROWSER_ASSIGN_PUBLIC_IP: true });
  });

  it.each([
    ["BROWSER_CLUSTER_ARN", "AuthConnectionService-BrowserTasksCluster"],
    ["BROWSER_TASK_DEFINITION_ARN", "arn:aws:ecs:eu-west-1:123456789012:task-definition/Browser"],
    ["BROWSER_SUBNETS", "subnet-0a1b2c3d4e5f60718,,subnet-0f1e2d3c4b5a69788"],
    ["BROWSER_SECURITY_GROUP", "sg-0123 sg-4567"],
    ["BROWSER_CONTAINER_NAME", ""],
    ["BROWSER_ROUTER_URL", "wss://d111111abcdef8.cloudfront.net"],
    ["BROWSER_ROUTER_URL", "https://d111111abcdef8.cloudfront.net/browsers"],
    ["BROWSER_ADMIN_KEY_ID", ""],
    ["BROWSER_ASSIGN_PUBLIC_IP", "sometimes"],
  ])("refuse a malformed %s", (name, value) => {
    expect(() => loadConfig({ ...deployed, [name]: value })).toThrow(new RegExp(name));
  });
});

describe("the AWS browser provider a deployment builds", () => {
  const aws = (settings: Record<string, string>) => browsers(loadConfig({ DEPLOYMENT_MODE: "aws", AWS_REGION: "eu-west-1", ...settings }));

  it("is unavailable, saying how to deploy with pools, on a stack deployed without them", () => {
    expect(aws({}).unavailable).toBe(noAwsBrowsers);
  });

  it("is unavailable, naming what is missing, when only some settings are given", () => {
    const partial = Object.fromEntries(Object.entries(deployed).filter(([name]) => name !== "BROWSER_ROUTER_URL" && name !== "BROWSER_ADMIN_KEY_ID"));
    expect(aws(partial).unavailable).toBe("this deployment's browser settings are incomplete: BROWSER_ROUTER_URL, BROWSER_ADMIN_KEY_ID not set");
  });

  it("runs browsers as ECS tasks once every setting is given", () => {
    expect(aws(deployed).unavailable).toBeUndefined();
  });
});
