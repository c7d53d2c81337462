import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routerSettings } from "#shared/browsers/router/settings.ts";
import { routes } from "#shared/routes.ts";
import { browserTaskPort } from "../../infra/constructs/browser-tasks.ts";
import { authConnectionApp, type AuthConnectionStack } from "../../infra/stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown };
type DockerImageAsset = { source: { directory: string; dockerFile?: string; platform?: string } };

const poolRoutes = ["AcquireBrowser", "ReleaseBrowser", "FlushBrowserPool", "DeleteBrowserPool", "UpdateBrowserPool"];
const browserSettings = [
  "BROWSER_CLUSTER_ARN",
  "BROWSER_TASK_DEFINITION_ARN",
  "BROWSER_SUBNETS",
  "BROWSER_SECURITY_GROUP",
  "BROWSER_CONTAINER_NAME",
  "BROWSER_ASSIGN_PUBLIC_IP",
  "BROWSER_ROUTER_URL",
  "BROWSER_ADMIN_KEY_ID",
];

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

/** The task definition whose one container is named `container`. */
function taskDefinitionWith(synthesized: Synthesized, container: string): [string, Resource] {
  const found = ofType(synthesized, "AWS::ECS::TaskDefinition").filter(([, task]) =>
    (task.Properties.ContainerDefinitions as { Name: string }[]).some((definition) => definition.Name === container),
  );
  expect(found, container).toHaveLength(1);
  return found[0]!;
}
const adminKeyOf = (synthesized: Synthesized) => ofType(synthesized, "AWS::KMS::Key").find(([id]) => id.includes("AdminKey"))!;
const browserTaskDefinition = (synthesized: Synthesized) => taskDefinitionWith(synthesized, "Browser");
const routerTaskDefinition = (synthesized: Synthesized) => taskDefinitionWith(synthesized, "Router");
const browserContainer = (synthesized: Synthesized) => (browserTaskDefinition(synthesized)[1].Properties.ContainerDefinitions as Record<string, unknown>[])[0]!;

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
  it("runs the browser tasks in one ECS cluster, in a VPC of two public and two isolated subnets and no NAT gateway", () => {
    only(pools, "AWS::ECS::Cluster");
    only(pools, "AWS::EC2::VPC");
    expect(ofType(pools, "AWS::EC2::Subnet").map(([, subnet]) => subnet.Properties.MapPublicIpOnLaunch)).toEqual([true, true, false, false]);
    expect(ofType(pools, "AWS::EC2::NatGateway")).toEqual([]);
  });

  it("defines one Fargate x86_64 task of 1 vCPU and 2 GB with no task role, serving the proxy port behind an init process and logging to a group with retention", () => {
    const [, task] = browserTaskDefinition(pools);
    const [logGroupId, logGroup] = ofType(pools, "AWS::Logs::LogGroup").find(([id]) => id.includes("BrowserTasksLogs"))!;
    const containers = task.Properties.ContainerDefinitions as Record<string, unknown>[];

    expect(task.Properties).toMatchObject({
      RequiresCompatibilities: ["FARGATE"],
      NetworkMode: "awsvpc",
      Cpu: "1024",
      Memory: "2048",
      RuntimePlatform: { CpuArchitecture: "X86_64", OperatingSystemFamily: "LINUX" },
    });
    expect(task.Properties.TaskRoleArn).toBeUndefined();
    expect(containers).toHaveLength(1);
    expect(containers[0]!.PortMappings).toEqual([{ ContainerPort: browserTaskPort, Protocol: "tcp" }]);
    expect(containers[0]!.EntryPoint).toBeUndefined();
    expect(containers[0]!.LogConfiguration).toMatchObject({ LogDriver: "awslogs", Options: { "awslogs-group": { Ref: logGroupId } } });
    // An init process forwards StopTask's signal to the entry and reaps what Chromium leaves.
    expect(containers[0]!.LinuxParameters).toMatchObject({ InitProcessEnabled: true });
    expect(logGroup.Properties.RetentionInDays).toBeGreaterThan(0);
  });

  it("runs one router task from the same image, with the router's entry and a role that may only list and describe this cluster's tasks", () => {
    const [routerTaskId, routerTask] = routerTaskDefinition(pools);
    const [, service] = only(pools, "AWS::ECS::Service");
    const [container] = routerTask.Properties.ContainerDefinitions as Record<string, unknown>[];
    const [clusterId] = only(pools, "AWS::ECS::Cluster");

    expect(service.Properties).toMatchObject({ DesiredCount: 1, LaunchType: "FARGATE", TaskDefinition: { Ref: routerTaskId } });
    expect(container!.EntryPoint).toEqual(["node", "shared/browsers/router/entry.ts"]);
    // What the stack passes is what the router's entry reads, and parses as it would.
    const environment = Object.fromEntries((container!.Environment as { Name: string; Value: unknown }[]).map(({ Name, Value }) => [Name, Value]));
    expect(Object.keys(environment).sort()).toEqual(["BROWSER_CLUSTER_ARN", "BROWSER_TASK_PORT", "ROUTER_PORT"]);
    expect(environment.BROWSER_CLUSTER_ARN).toEqual({ "Fn::GetAtt": [clusterId, "Arn"] });
    expect(routerSettings.safeParse({ ...environment, BROWSER_CLUSTER_ARN: "arn:aws:ecs:eu-west-1:123456789012:cluster/browsers" }).success).toBe(true);
    expect(JSON.stringify(container!.Image)).toEqual(JSON.stringify(browserContainer(pools).Image));
    const routerRole = (routerTask.Properties.TaskRoleArn as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
    const inCluster = { ArnEquals: { "ecs:cluster": { "Fn::GetAtt": [clusterId, "Arn"] } } };
    expect(statements(pools).filter(({ roles }) => roles.includes(routerRole)).map(({ statement }) => ({ action: statement.Action, condition: statement.Condition }))).toEqual([
      { action: "ecs:DescribeTasks", condition: inCluster },
      { action: "ecs:ListTasks", condition: inCluster },
    ]);
    // The only roles ECS may assume: the two execution roles (image pull and logs) and the router's.
    const ecsRoles = ofType(pools, "AWS::IAM::Role")
      .filter(([, role]) => JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes("ecs-tasks.amazonaws.com"))
      .map(([id]) => ({ "Fn::GetAtt": [id, "Arn"] }));
    const [, browserTask] = browserTaskDefinition(pools);
    expect(ecsRoles).toEqual(
      expect.arrayContaining([browserTask.Properties.ExecutionRoleArn, routerTask.Properties.ExecutionRoleArn, routerTask.Properties.TaskRoleArn]),
    );
    expect(ecsRoles).toHaveLength(3);
  });

  it("takes both containers' image from the one Docker asset the assembly stages, built for linux/amd64 from the repository's Dockerfile", () => {
    const image = JSON.stringify(browserContainer(pools).Image);
    const assets = Object.entries(pools.dockerImages);

    expect(assets).toHaveLength(1);
    const [hash, asset] = assets[0]!;
    expect(image).toContain(`:${hash}`);
    expect(asset.source).toMatchObject({ dockerFile: "infra/browser-task/Dockerfile", platform: "linux/amd64" });
  });

  it("stages the Dockerfile, the entry and the router in the image's context, and neither node_modules nor local data", () => {
    const [, asset] = Object.entries(pools.dockerImages)[0]!;
    const context = join(pools.outdir, asset.source.directory);

    for (const file of ["infra/browser-task/Dockerfile", "shared/browsers/task/entry.ts", "shared/browsers/router/entry.ts", "package.json", "package-lock.json"]) {
      expect(existsSync(join(context, file)), file).toBe(true);
    }
    for (const path of ["node_modules", ".data", "infra/stack.ts", "functions"]) expect(existsSync(join(context, path)), path).toBe(false);
  });

  it("opens the tasks only to the router, the router only to the load balancer, and the internal load balancer only to the isolated subnets", () => {
    const group = (name: string) => ofType(pools, "AWS::EC2::SecurityGroup").find(([id]) => id.includes(name))!;
    const [taskGroupId, taskGroup] = group("TaskSecurityGroup");
    const [routerGroupId, routerGroup] = group("RouterSecurityGroup");
    const [balancerGroupId, balancerGroup] = group("LoadBalancerSecurityGroup");
    const ingress = ofType(pools, "AWS::EC2::SecurityGroupIngress").map(([, rule]) => rule.Properties);
    const egress = ofType(pools, "AWS::EC2::SecurityGroupEgress").map(([, rule]) => rule.Properties);
    const proxyPort = { IpProtocol: "tcp", FromPort: browserTaskPort, ToPort: browserTaskPort };

    expect(taskGroup.Properties.SecurityGroupEgress).toEqual([{ CidrIp: "0.0.0.0/0", Description: "Allow all outbound traffic by default", IpProtocol: "-1" }]);
    expect(ingress).toHaveLength(2);
    expect(ingress).toEqual(expect.arrayContaining([
      expect.objectContaining({ GroupId: { "Fn::GetAtt": [taskGroupId, "GroupId"] }, SourceSecurityGroupId: { "Fn::GetAtt": [routerGroupId, "GroupId"] }, ...proxyPort }),
      expect.objectContaining({ GroupId: { "Fn::GetAtt": [routerGroupId, "GroupId"] }, SourceSecurityGroupId: { "Fn::GetAtt": [balancerGroupId, "GroupId"] }, ...proxyPort }),
    ]));
    const isolatedCidrs = ofType(pools, "AWS::EC2::Subnet")
      .filter(([, subnet]) => subnet.Properties.MapPublicIpOnLaunch === false)
      .map(([, subnet]) => subnet.Properties.CidrBlock);
    expect(isolatedCidrs).toHaveLength(2);
    expect(balancerGroup.Properties.SecurityGroupIngress).toEqual(
      isolatedCidrs.map((cidr) => expect.objectContaining({ CidrIp: cidr, IpProtocol: "tcp", FromPort: 80, ToPort: 80 })),
    );
    expect(taskGroup.Properties.SecurityGroupIngress).toBeUndefined();
    expect(routerGroup.Properties.SecurityGroupIngress).toBeUndefined();
    expect(routerGroup.Properties.SecurityGroupEgress).toEqual([expect.objectContaining({ CidrIp: "0.0.0.0/0", IpProtocol: "tcp", FromPort: 443, ToPort: 443 })]);
    expect(egress).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ GroupId: { "Fn::GetAtt": [routerGroupId, "GroupId"] }, DestinationSecurityGroupId: { "Fn::GetAtt": [taskGroupId, "GroupId"] }, ...proxyPort }),
        expect.objectContaining({ GroupId: { "Fn::GetAtt": [balancerGroupId, "GroupId"] }, DestinationSecurityGroupId: { "Fn::GetAtt": [routerGroupId, "GroupId"] }, ...proxyPort }),
      ]),
    );
    expect(egress).toHaveLength(2);
  });

  it("serves the router through CloudFront over HTTPS only, from an internal load balancer as a VPC origin, passing the query and headers and caching nothing", () => {
    const [balancerId, balancer] = only(pools, "AWS::ElasticLoadBalancingV2::LoadBalancer");
    const [, vpcOrigin] = only(pools, "AWS::CloudFront::VpcOrigin");
    const [, distribution] = only(pools, "AWS::CloudFront::Distribution");
    const config = distribution.Properties.DistributionConfig as {
      DefaultCacheBehavior: Record<string, unknown>;
      Origins: { VpcOriginConfig?: unknown }[];
    };
    const isolated = ofType(pools, "AWS::EC2::Subnet").filter(([, subnet]) => subnet.Properties.MapPublicIpOnLaunch === false).map(([id]) => ({ Ref: id }));

    expect(balancer.Properties).toMatchObject({ Scheme: "internal", Subnets: isolated });
    expect(balancer.Properties.LoadBalancerAttributes).toEqual(expect.arrayContaining([{ Key: "idle_timeout.timeout_seconds", Value: "3600" }]));
    expect(JSON.stringify(vpcOrigin.Properties)).toContain(`"${balancerId}"`);
    expect(config.Origins).toHaveLength(1);
    expect(config.Origins[0]!.VpcOriginConfig).toBeDefined();
    expect((config as { CustomErrorResponses?: { ErrorCachingMinTTL: number }[] }).CustomErrorResponses?.map((response) => response.ErrorCachingMinTTL)).toEqual(
      Array.from({ length: 11 }, () => 0),
    );
    expect(config.DefaultCacheBehavior).toMatchObject({
      ViewerProtocolPolicy: "https-only",
      AllowedMethods: ["GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"],
      // The managed CachingDisabled and AllViewer policies.
      CachePolicyId: "4135ea2d-6df8-44a3-9df3-4b5a84be39ad",
      OriginRequestPolicyId: "216adef6-5c7f-47e4-b989-5492eafa07d3",
    });
  });

  it("lets the pool functions and the filler stop, describe and list this cluster's tasks and derive admin secrets, and only the filler run tasks and pass the execution role", () => {
    const [clusterId] = only(pools, "AWS::ECS::Cluster");
    const [keyId, key] = adminKeyOf(pools);
    const [, task] = browserTaskDefinition(pools);
    const inCluster = { ArnEquals: { "ecs:cluster": { "Fn::GetAtt": [clusterId, "Arn"] } } };
    const routerRole = (routerTaskDefinition(pools)[1].Properties.TaskRoleArn as { "Fn::GetAtt": [string, string] })["Fn::GetAtt"][0];
    const granted = statements(pools).filter(({ roles }) => !roles.includes(routerRole));
    const rolesWith = (action: string) => [...new Set(granted.filter(({ statement }) => actionsOf(statement).includes(action)).flatMap(({ roles }) => roles))].sort();
    const routeRoles = poolFunctionRoles(pools);
    const fillerRole = roleOf(pools, functionFor(pools, "functions/scheduled/fill-browser-pools.ts"));

    expect(routeRoles).toHaveLength(poolRoutes.length);
    expect(key.Properties).toMatchObject({ KeySpec: "HMAC_256", KeyUsage: "GENERATE_VERIFY_MAC" });
    for (const action of ["ecs:StopTask", "ecs:DescribeTasks", "ecs:ListTasks", "kms:GenerateMac"]) expect(rolesWith(action), action).toEqual([...routeRoles, fillerRole].sort());
    for (const action of ["ecs:RunTask", "ecs:TagResource", "iam:PassRole"]) expect(rolesWith(action), action).toEqual([fillerRole]);
    const ecsActions = granted.flatMap(({ statement }) => actionsOf(statement)).filter((action) => action.startsWith("ecs:"));
    expect([...new Set(ecsActions)].sort()).toEqual(["ecs:DescribeTasks", "ecs:ListTasks", "ecs:RunTask", "ecs:StopTask", "ecs:TagResource"]);
    for (const { statement } of granted.filter(({ statement }) => actionsOf(statement).some((action) => action.startsWith("ecs:")))) {
      expect(statement.Condition, JSON.stringify(statement.Action)).toEqual(actionsOf(statement).includes("ecs:TagResource") ? { StringEquals: { "ecs:CreateAction": "RunTask" } } : inCluster);
    }
    expect(granted.find(({ statement }) => actionsOf(statement).includes("kms:GenerateMac"))?.statement.Resource).toEqual({ "Fn::GetAtt": [keyId, "Arn"] });
    expect(granted.find(({ statement }) => actionsOf(statement).includes("iam:PassRole"))?.statement.Resource).toEqual(task.Properties.ExecutionRoleArn);
    expect(JSON.stringify(granted.find(({ statement }) => actionsOf(statement).includes("ecs:RunTask"))?.statement.Resource)).toContain(":task-definition/");
    // The wildcard acknowledged on the pool functions' roles covers ListTasks and nothing else.
    const anyResource = granted.filter(({ roles, statement }) => roles.some((role) => routeRoles.includes(role)) && JSON.stringify(statement.Resource) === '"*"');
    expect(anyResource.map(({ statement }) => statement.Action)).toEqual(routeRoles.map(() => "ecs:ListTasks"));
  });

  it("runs the filler once a minute from EventBridge Scheduler, dropping a run that could not start, with no reserved concurrency", () => {
    const fillerId = functionFor(pools, "functions/scheduled/fill-browser-pools.ts");
    const [, schedule] = only(pools, "AWS::Scheduler::Schedule");
    const [, invokeConfig] = only(pools, "AWS::Lambda::EventInvokeConfig");

    expect(pools.resources[fillerId]!.Properties).toMatchObject({ Timeout: 300 });
    // An account at Lambda's default concurrency limit has none to reserve: passes are kept apart in the table.
    expect(pools.resources[fillerId]!.Properties.ReservedConcurrentExecutions).toBeUndefined();
    expect(schedule.Properties).toMatchObject({
      ScheduleExpression: "rate(1 minute)",
      State: "ENABLED",
      Target: { Arn: { "Fn::GetAtt": [fillerId, "Arn"] }, RetryPolicy: { MaximumRetryAttempts: 0 } },
    });
    expect(invokeConfig.Properties).toMatchObject({ FunctionName: { Ref: fillerId }, MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 });
  });

  it("gives the pool functions and the filler, and only them, where to launch and reach browser tasks", () => {
    const [taskId] = browserTaskDefinition(pools);
    const [clusterId] = only(pools, "AWS::ECS::Cluster");
    const [keyId] = adminKeyOf(pools);
    const [distributionId] = only(pools, "AWS::CloudFront::Distribution");
    const [taskGroupId] = ofType(pools, "AWS::EC2::SecurityGroup").find(([id]) => id.includes("TaskSecurityGroup"))!;
    const variablesOf = (handler: string) =>
      (pools.resources[functionFor(pools, handler)]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const withSettings = [...routes.filter((route) => poolRoutes.includes(route.name)).map((route) => route.handler), "functions/scheduled/fill-browser-pools.ts"];

    for (const route of routes.filter((route) => !poolRoutes.includes(route.name))) {
      expect(Object.keys(variablesOf(route.handler)).filter((name) => browserSettings.includes(name)), route.name).toEqual([]);
    }
    for (const handler of withSettings) {
      const variables = variablesOf(handler);
      expect(variables, handler).toMatchObject({
        BROWSER_CLUSTER_ARN: { "Fn::GetAtt": [clusterId, "Arn"] },
        BROWSER_TASK_DEFINITION_ARN: { Ref: taskId },
        BROWSER_SECURITY_GROUP: { "Fn::GetAtt": [taskGroupId, "GroupId"] },
        BROWSER_CONTAINER_NAME: "Browser",
        BROWSER_ASSIGN_PUBLIC_IP: "true",
        BROWSER_ROUTER_URL: { "Fn::Join": ["", ["https://", { "Fn::GetAtt": [distributionId, "DomainName"] }]] },
        BROWSER_ADMIN_KEY_ID: { "Fn::GetAtt": [keyId, "Arn"] },
      });
      const subnets = ofType(pools, "AWS::EC2::Subnet").filter(([, subnet]) => subnet.Properties.MapPublicIpOnLaunch === true).map(([id]) => id);
      expect(JSON.stringify(variables.BROWSER_SUBNETS)).toEqual(JSON.stringify({ "Fn::Join": ["", [{ Ref: subnets[0] }, ",", { Ref: subnets[1] }]] }));
    }
  });

  it("reports no cdk-nag AwsSolutions finding that is not acknowledged with a reason", () => {
    const report = new AwsSolutionsChecks(pools.app).validateScope(pools.stack);

    expect(report.violations.map((violation) => `${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(", ")}`)).toEqual([]);
  });
});

describe("a stack without pools (the default)", () => {
  it("has no VPC, cluster, task definition, service, load balancer, distribution, schedule, security group or Docker image asset", () => {
    const types = [
      "AWS::EC2::VPC",
      "AWS::ECS::Cluster",
      "AWS::ECS::TaskDefinition",
      "AWS::ECS::Service",
      "AWS::ElasticLoadBalancingV2::LoadBalancer",
      "AWS::CloudFront::Distribution",
      "AWS::Scheduler::Schedule",
      "AWS::EC2::SecurityGroup",
    ];
    for (const type of types) expect(ofType(pooless, type), type).toEqual([]);
    expect(ofType(pooless, "AWS::Lambda::Function").filter(([, fn]) => String(fn.Properties.Description).includes("fill-browser-pools"))).toEqual([]);
    expect(pooless.dockerImages).toEqual({});
  });

  it("grants no ECS or PassRole action and sets no browser task setting", () => {
    const actions = statements(pooless).flatMap(({ statement }) => actionsOf(statement));
    const variables = ofType(pooless, "AWS::Lambda::Function").flatMap(([, fn]) => Object.keys((fn.Properties.Environment as { Variables: object }).Variables));

    expect(actions.filter((action) => action.startsWith("ecs:") || action === "iam:PassRole" || action === "kms:GenerateMac")).toEqual([]);
    expect(variables.filter((name) => browserSettings.includes(name))).toEqual([]);
  });
});
