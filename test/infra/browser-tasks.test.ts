import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "#shared/routes.ts";
import { browserTaskPort } from "../../infra/constructs/browser-tasks.ts";
import { authConnectionApp, type AuthConnectionStack } from "../../infra/stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
type DockerImageAsset = { source: { directory: string; dockerFile?: string; platform?: string } };

const poolRoutes = ["AcquireBrowser", "ReleaseBrowser", "FlushBrowserPool", "DeleteBrowserPool", "UpdateBrowserPool"];
const browserSettings = ["BROWSER_CLUSTER_ARN", "BROWSER_TASK_DEFINITION_ARN", "BROWSER_SUBNETS", "BROWSER_SECURITY_GROUP", "BROWSER_CONTAINER_NAME"];

interface Synthesized {
  app: App;
  stack: AuthConnectionStack;
  resources: Record<string, Resource>;
  outdir: string;
  dockerImages: Record<string, DockerImageAsset>;
}

/** One stack, its template, and the assembly's asset manifest, in a directory of its own. */
function synthesize(context: Record<string, unknown>): Synthesized {
  const outdir = mkdtempSync(join(tmpdir(), "browser-tasks-synth-"));
  // Bundling is exercised by synth.test.ts; the Docker image asset is only staged at synth.
  const app = new App({ outdir, context: { "aws:cdk:bundling-stacks": [], ...context } });
  const stack = authConnectionApp(app);
  const resources = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
  const assembly = app.synth();
  const manifest = JSON.parse(readFileSync(join(assembly.directory, `${stack.artifactId}.assets.json`), "utf8")) as {
    dockerImages?: Record<string, DockerImageAsset>;
  };
  return { app, stack, resources, outdir, dockerImages: manifest.dockerImages ?? {} };
}

let pools: Synthesized;
let pooless: Synthesized;

const ofType = (synthesized: Synthesized, type: string) => Object.entries(synthesized.resources).filter(([, resource]) => resource.Type === type);
const only = (synthesized: Synthesized, type: string) => {
  const found = ofType(synthesized, type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
};

function functionFor(synthesized: Synthesized, handler: string): string {
  const matches = ofType(synthesized, "AWS::Lambda::Function").filter(([, fn]) => String(fn.Properties.Description).endsWith(`: ${handler}`));
  expect(matches).toHaveLength(1);
  return matches[0]![0];
}

/** Every statement of every policy, with the roles the policy is attached to. */
function statements(synthesized: Synthesized): { roles: string[]; statement: Statement }[] {
  return ofType(synthesized, "AWS::IAM::Policy").flatMap(([, policy]) =>
    (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.map((statement) => ({
      roles: (policy.Properties.Roles as { Ref: string }[]).map((role) => role.Ref),
      statement,
    })),
  );
}

const actionsOf = (statement: Statement) => (Array.isArray(statement.Action) ? statement.Action : [statement.Action]);

function roleOf(synthesized: Synthesized, functionId: string): string {
  return (synthesized.resources[functionId]!.Properties.Role as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
}

const poolFunctionRoles = (synthesized: Synthesized) =>
  routes.filter((route) => poolRoutes.includes(route.name)).map((route) => roleOf(synthesized, functionFor(synthesized, route.handler)));

beforeAll(() => {
  pools = synthesize({ POOLS: "true" });
  pooless = synthesize({});
});

afterAll(() => {
  for (const synthesized of [pools, pooless]) rmSync(synthesized.outdir, { recursive: true, force: true });
});

describe("a stack with pools (POOLS=true)", () => {
  it("runs the browser tasks in one ECS cluster, in a VPC of two public subnets and no NAT gateway", () => {
    only(pools, "AWS::ECS::Cluster");
    only(pools, "AWS::EC2::VPC");
    expect(ofType(pools, "AWS::EC2::Subnet").map(([, subnet]) => subnet.Properties.MapPublicIpOnLaunch)).toEqual([true, true]);
    expect(ofType(pools, "AWS::EC2::NatGateway")).toEqual([]);
  });

  it("defines one Fargate x86_64 task of 0.5 vCPU and 1 GB with no task role, serving the proxy port behind an init process and logging to a group with retention", () => {
    const [, task] = only(pools, "AWS::ECS::TaskDefinition");
    const [logGroupId, logGroup] = ofType(pools, "AWS::Logs::LogGroup").find(([id]) => id.includes("BrowserTasksLogs"))!;
    const containers = task.Properties.ContainerDefinitions as Record<string, unknown>[];

    expect(task.Properties).toMatchObject({
      RequiresCompatibilities: ["FARGATE"],
      NetworkMode: "awsvpc",
      Cpu: "512",
      Memory: "1024",
      RuntimePlatform: { CpuArchitecture: "X86_64", OperatingSystemFamily: "LINUX" },
    });
    expect(task.Properties.TaskRoleArn).toBeUndefined();
    expect(containers).toHaveLength(1);
    expect(containers[0]!.PortMappings).toEqual([{ ContainerPort: browserTaskPort, Protocol: "tcp" }]);
    expect(containers[0]!.LogConfiguration).toMatchObject({ LogDriver: "awslogs", Options: { "awslogs-group": { Ref: logGroupId } } });
    // An init process forwards StopTask's signal to the entry and reaps what Chromium leaves.
    expect(containers[0]!.LinuxParameters).toMatchObject({ InitProcessEnabled: true });
    expect(logGroup.Properties.RetentionInDays).toBeGreaterThan(0);
    // The only role ECS may assume for the task is the execution role (image pull and logs).
    const taskRoles = ofType(pools, "AWS::IAM::Role").filter(([, role]) => JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes("ecs-tasks.amazonaws.com"));
    expect(taskRoles.map(([id]) => ({ "Fn::GetAtt": [id, "Arn"] }))).toEqual([task.Properties.ExecutionRoleArn]);
  });

  it("takes the container's image from the Docker asset the assembly stages, built for linux/amd64 from the repository's Dockerfile", () => {
    const [, task] = only(pools, "AWS::ECS::TaskDefinition");
    const image = JSON.stringify((task.Properties.ContainerDefinitions as { Image: unknown }[])[0]!.Image);
    const assets = Object.entries(pools.dockerImages);

    expect(assets).toHaveLength(1);
    const [hash, asset] = assets[0]!;
    expect(image).toContain(`:${hash}`);
    expect(asset.source).toMatchObject({ dockerFile: "infra/browser-task/Dockerfile", platform: "linux/amd64" });
  });

  it("stages the Dockerfile and the entry in the image's context, and neither node_modules nor local data", () => {
    const [, asset] = Object.entries(pools.dockerImages)[0]!;
    const context = join(pools.outdir, asset.source.directory);

    for (const file of ["infra/browser-task/Dockerfile", "shared/browsers/task/entry.ts", "package.json", "package-lock.json"]) {
      expect(existsSync(join(context, file)), file).toBe(true);
    }
    for (const path of ["node_modules", ".data", "infra/stack.ts", "functions"]) expect(existsSync(join(context, path)), path).toBe(false);
  });

  it("lets the tasks reach the web and only the router's security group reach them, on the proxy port", () => {
    const [taskGroupId, taskGroup] = ofType(pools, "AWS::EC2::SecurityGroup").find(([id]) => id.includes("TaskSecurityGroup"))!;
    const [routerGroupId] = ofType(pools, "AWS::EC2::SecurityGroup").find(([id]) => id.includes("RouterSecurityGroup"))!;
    const ingress = ofType(pools, "AWS::EC2::SecurityGroupIngress").map(([, rule]) => rule.Properties);

    expect(taskGroup.Properties.SecurityGroupIngress).toBeUndefined();
    expect(taskGroup.Properties.SecurityGroupEgress).toEqual([{ CidrIp: "0.0.0.0/0", Description: "Allow all outbound traffic by default", IpProtocol: "-1" }]);
    expect(ingress).toEqual([
      expect.objectContaining({
        GroupId: { "Fn::GetAtt": [taskGroupId, "GroupId"] },
        SourceSecurityGroupId: { "Fn::GetAtt": [routerGroupId, "GroupId"] },
        IpProtocol: "tcp",
        FromPort: browserTaskPort,
        ToPort: browserTaskPort,
      }),
    ]);
    expect(ofType(pools, "AWS::EC2::SecurityGroup").flatMap(([, group]) => (group.Properties.SecurityGroupIngress as unknown[] | undefined) ?? [])).toEqual([]);
  });

  it("lets only the pool functions stop, describe and list this cluster's tasks, and no function run a task or pass a role", () => {
    const [clusterId] = only(pools, "AWS::ECS::Cluster");
    const inCluster = { ArnEquals: { "ecs:cluster": { "Fn::GetAtt": [clusterId, "Arn"] } } };
    const ecsStatements = statements(pools).filter(({ statement }) => actionsOf(statement).some((action) => action.startsWith("ecs:")));
    const rolesWith = (action: string) => [...new Set(ecsStatements.filter(({ statement }) => actionsOf(statement).includes(action)).flatMap(({ roles }) => roles))].sort();
    const expectedRoles = poolFunctionRoles(pools).sort();

    expect(expectedRoles).toHaveLength(poolRoutes.length);
    for (const action of ["ecs:StopTask", "ecs:DescribeTasks", "ecs:ListTasks"]) expect(rolesWith(action), action).toEqual(expectedRoles);
    expect([...new Set(ecsStatements.flatMap(({ statement }) => actionsOf(statement)))].sort()).toEqual(["ecs:DescribeTasks", "ecs:ListTasks", "ecs:StopTask"]);
    for (const { statement } of ecsStatements) expect(statement.Condition).toEqual(inCluster);
    // The wildcard acknowledged on the pool functions' roles covers ListTasks and nothing else.
    const anyResource = statements(pools).filter(({ roles, statement }) => roles.some((role) => expectedRoles.includes(role)) && JSON.stringify(statement.Resource) === '"*"');
    expect(anyResource.map(({ statement }) => statement.Action)).toEqual(expectedRoles.map(() => "ecs:ListTasks"));
    // A public route must not start tasks: running them is the scheduled filler's alone.
    expect(statements(pools).filter(({ statement }) => actionsOf(statement).includes("iam:PassRole"))).toEqual([]);
  });

  it("gives the pool functions, and only them, where to launch browser tasks", () => {
    const [taskId] = only(pools, "AWS::ECS::TaskDefinition");
    const [clusterId] = only(pools, "AWS::ECS::Cluster");
    const [taskGroupId] = ofType(pools, "AWS::EC2::SecurityGroup").find(([id]) => id.includes("TaskSecurityGroup"))!;
    const variablesOf = (handler: string) =>
      (pools.resources[functionFor(pools, handler)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

    for (const route of routes) {
      const variables = variablesOf(route.handler);
      if (!poolRoutes.includes(route.name)) {
        expect(Object.keys(variables).filter((name) => browserSettings.includes(name)), route.name).toEqual([]);
        continue;
      }
      expect(variables, route.name).toMatchObject({
        BROWSER_CLUSTER_ARN: { "Fn::GetAtt": [clusterId, "Arn"] },
        BROWSER_TASK_DEFINITION_ARN: { Ref: taskId },
        BROWSER_SECURITY_GROUP: { "Fn::GetAtt": [taskGroupId, "GroupId"] },
        BROWSER_CONTAINER_NAME: "Browser",
      });
      const subnets = ofType(pools, "AWS::EC2::Subnet").map(([id]) => id);
      expect(JSON.stringify(variables.BROWSER_SUBNETS)).toEqual(JSON.stringify({ "Fn::Join": ["", [{ Ref: subnets[0] }, ",", { Ref: subnets[1] }]] }));
    }
  });

  it("reports no cdk-nag AwsSolutions finding that is not acknowledged with a reason", () => {
    const report = new AwsSolutionsChecks(pools.app).validateScope(pools.stack);

    expect(report.violations.map((violation) => `${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(", ")}`)).toEqual([]);
  });
});

describe("a stack without pools (the default)", () => {
  it("has no VPC, cluster, task definition, security group or Docker image asset", () => {
    for (const type of ["AWS::EC2::VPC", "AWS::ECS::Cluster", "AWS::ECS::TaskDefinition", "AWS::EC2::SecurityGroup"]) expect(ofType(pooless, type), type).toEqual([]);
    expect(pooless.dockerImages).toEqual({});
  });

  it("grants no ECS or PassRole action and sets no browser task setting", () => {
    const actions = statements(pooless).flatMap(({ statement }) => actionsOf(statement));
    const variables = ofType(pooless, "AWS::Lambda::Function").flatMap(([, fn]) => Object.keys((fn.Properties.Environment as { Variables: object }).Variables));

    expect(actions.filter((action) => action.startsWith("ecs:") || action === "iam:PassRole")).toEqual([]);
    expect(variables.filter((name) => browserSettings.includes(name))).toEqual([]);
  });
});
