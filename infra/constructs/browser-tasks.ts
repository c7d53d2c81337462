import { resolve } from "node:path";
import { ArnFormat, RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import { FlowLogDestination, FlowLogTrafficType, Port, SecurityGroup, SubnetType, Vpc } from "aws-cdk-lib/aws-ec2";
import { Platform } from "aws-cdk-lib/aws-ecr-assets";
import {
  CfnTaskDefinition,
  Cluster,
  ContainerImage,
  CpuArchitecture,
  FargateTaskDefinition,
  LinuxParameters,
  LogDrivers,
  OperatingSystemFamily,
  type ContainerDefinition,
} from "aws-cdk-lib/aws-ecs";
import { Grant, type IGrantable, type IRole } from "aws-cdk-lib/aws-iam";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { Config } from "#shared/config.ts";
import { acknowledgeWildcard } from "./nag.ts";

const repoRoot = resolve(import.meta.dirname, "../..");

/** The entry's proxy port, as the image sets `BROWSER_TASK_PORT` and exposes it. */
export const browserTaskPort = 8080;

/** The settings the ECS provider reads to launch browser tasks, by their config names. */
export type BrowserTaskSettings = Required<Pick<Config, "BROWSER_CLUSTER_ARN" | "BROWSER_TASK_DEFINITION_ARN" | "BROWSER_SECURITY_GROUP" | "BROWSER_CONTAINER_NAME">> & {
  BROWSER_SUBNETS: string;
};

/**
 * Pooled browsers as ECS Fargate tasks: one task per browser, running the same entry and proxy that
 * run locally (`infra/browser-task/Dockerfile`). The tasks accept connections only from the router,
 * whose security group is made here so the rule exists before the router service does.
 */
export class BrowserTasks extends Construct {
  readonly vpc: Vpc;
  readonly cluster: Cluster;
  readonly taskDefinition: FargateTaskDefinition;
  readonly container: ContainerDefinition;
  readonly executionRole: IRole;
  readonly taskSecurityGroup: SecurityGroup;
  /** For the router service, which comes next: nothing uses this group yet. */
  readonly routerSecurityGroup: SecurityGroup;

  constructor(scope: Construct, id: string) {
    super(scope, id);

    // Public subnets only and no NAT gateway: each task gets a public IPv4 address for its egress
    // to the web, since a NAT gateway costs about $32 a month per AZ before any traffic, more than a
    // small pool's addresses. The security group below keeps every inbound connection out but the
    // router's.
    this.vpc = new Vpc(this, "Vpc", {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: "Public", subnetType: SubnetType.PUBLIC }],
      // Nothing is ever placed in the default security group here; restricting it would cost a
      // custom-resource Lambda in every deployment with pools.
      restrictDefaultSecurityGroup: false,
    });
    // Rejected connections only: what is tried against the tasks, at a fraction of the cost of
    // logging every accepted flow of browsers that load arbitrary pages.
    this.vpc.addFlowLog("RejectedFlows", {
      trafficType: FlowLogTrafficType.REJECT,
      destination: FlowLogDestination.toCloudWatchLogs(
        new LogGroup(this, "FlowLogs", { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY }),
      ),
    });

    this.cluster = new Cluster(this, "Cluster", { vpc: this.vpc });
    Validations.of(this.cluster).acknowledge({
      id: "AwsSolutions-ECS4",
      reason: "Container Insights bills custom metrics per task; a pooled browser's health is what the pool functions check and its log stream records",
    });

    this.taskDefinition = new FargateTaskDefinition(this, "Task", {
      cpu: 512,
      memoryLimitMiB: 1024,
      runtimePlatform: { cpuArchitecture: CpuArchitecture.X86_64, operatingSystemFamily: OperatingSystemFamily.LINUX },
    });
    // No task role: a task runs arbitrary web pages and must hold no AWS credentials. CDK always
    // makes one, so it is removed with the definition's reference to it.
    this.taskDefinition.node.tryRemoveChild("TaskRole");
    (this.taskDefinition.node.defaultChild as CfnTaskDefinition).addPropertyDeletionOverride("TaskRoleArn");

    const logGroup = new LogGroup(this, "Logs", { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.container = this.taskDefinition.addContainer("Browser", {
      // The repository root is the context; .dockerignore keeps it to what the image copies.
      image: ContainerImage.fromAsset(repoRoot, { file: "infra/browser-task/Dockerfile", platform: Platform.LINUX_AMD64 }),
      portMappings: [{ containerPort: browserTaskPort }],
      // An init process as the container's first: it forwards StopTask's SIGTERM to the entry and
      // reaps the processes Chromium leaves, which Node as the first process would not.
      linuxParameters: new LinuxParameters(this, "BrowserLinux", { initProcessEnabled: true }),
      logging: LogDrivers.awsLogs({ logGroup, streamPrefix: "browser" }),
    });
    const executionRole = this.taskDefinition.executionRole;
    if (!executionRole) throw new Error("the browser task's image and logs need an execution role");
    this.executionRole = executionRole;
    acknowledgeWildcard(
      executionRole,
      "*",
      "ecr:GetAuthorizationToken has no resource-level permissions; pulling is limited to the asset repository by the other statement",
    );

    this.routerSecurityGroup = new SecurityGroup(this, "RouterSecurityGroup", {
      vpc: this.vpc,
      description: "The router that forwards leased DevTools connections to browser tasks",
      allowAllOutbound: false,
    });
    this.taskSecurityGroup = new SecurityGroup(this, "TaskSecurityGroup", {
      vpc: this.vpc,
      description: "Browser tasks: the web outbound, only the router inbound on the proxy port",
      allowAllOutbound: true,
    });
    this.taskSecurityGroup.addIngressRule(this.routerSecurityGroup, Port.tcp(browserTaskPort), "The router, to the lease proxy");
  }

  /** Where and how the ECS provider launches a browser task. */
  get settings(): BrowserTaskSettings {
    return {
      BROWSER_CLUSTER_ARN: this.cluster.clusterArn,
      BROWSER_TASK_DEFINITION_ARN: this.taskDefinition.taskDefinitionArn,
      BROWSER_SUBNETS: this.vpc.publicSubnets.map((subnet) => subnet.subnetId).join(","),
      BROWSER_SECURITY_GROUP: this.taskSecurityGroup.securityGroupId,
      BROWSER_CONTAINER_NAME: this.container.containerName,
    };
  }

  /**
   * Lets `grantee` stop, describe and list the cluster's tasks: nothing else of ECS. The routes that
   * lease and destroy browsers get this; running tasks (RunTask on this task definition, TagResource
   * while launching, PassRole on the execution role) is for the scheduled filler alone, which comes
   * with the router, so that no public route can start tasks.
   */
  grantStop(grantee: IGrantable): void {
    const inCluster = { ArnEquals: { "ecs:cluster": this.cluster.clusterArn } };
    const tasksOfCluster = Stack.of(this).formatArn({
      service: "ecs",
      resource: "task",
      resourceName: `${this.cluster.clusterName}/*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    Grant.addToPrincipal({ grantee, actions: ["ecs:StopTask", "ecs:DescribeTasks"], resourceArns: [tasksOfCluster], conditions: inCluster });
    // ListTasks takes no task resource; the condition keeps it to this cluster.
    Grant.addToPrincipal({ grantee, actions: ["ecs:ListTasks"], resourceArns: ["*"], conditions: inCluster });
    const principal = grantee.grantPrincipal;
    if (principal instanceof Construct) {
      acknowledgeWildcard(principal, tasksOfCluster, "task ids are made when a task starts; the statements are limited to this cluster's tasks");
      acknowledgeWildcard(principal, "*", "ecs:ListTasks has no task resource; its ecs:cluster condition limits it to this cluster");
    }
  }
}
