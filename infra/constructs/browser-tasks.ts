import { resolve } from "node:path";
import { ArnFormat, Duration, RemovalPolicy, Stack, Validations } from "aws-cdk-lib";
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  ViewerProtocolPolicy,
} from "aws-cdk-lib/aws-cloudfront";
import { VpcOrigin } from "aws-cdk-lib/aws-cloudfront-origins";
import { FlowLogDestination, FlowLogTrafficType, Peer, Port, SecurityGroup, SubnetType, Vpc } from "aws-cdk-lib/aws-ec2";
import { Platform } from "aws-cdk-lib/aws-ecr-assets";
import {
  CfnTaskDefinition,
  Cluster,
  ContainerImage,
  CpuArchitecture,
  FargateService,
  FargateTaskDefinition,
  LinuxParameters,
  LogDrivers,
  OperatingSystemFamily,
  type ContainerDefinition,
} from "aws-cdk-lib/aws-ecs";
import { ApplicationLoadBalancer, ApplicationProtocol, Protocol } from "aws-cdk-lib/aws-elasticloadbalancingv2";
import { Grant, type IGrantable, type IRole } from "aws-cdk-lib/aws-iam";
import { Key, KeySpec, KeyUsage } from "aws-cdk-lib/aws-kms";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Construct } from "constructs";
import type { Config } from "#shared/config.ts";
import { acknowledgeWildcard } from "./nag.ts";

const repoRoot = resolve(import.meta.dirname, "../..");

/** The entry's proxy port, as the image sets `BROWSER_TASK_PORT` and exposes it; the router listens on the same. */
export const browserTaskPort = 8080;

/** The settings the ECS provider reads to launch and reach browser tasks, by their config names. */
export type BrowserTaskSettings = Required<
  Pick<Config, "BROWSER_CLUSTER_ARN" | "BROWSER_TASK_DEFINITION_ARN" | "BROWSER_SECURITY_GROUP" | "BROWSER_CONTAINER_NAME" | "BROWSER_ROUTER_URL" | "BROWSER_ADMIN_KEY_ID">
> & {
  BROWSER_SUBNETS: string;
  BROWSER_ASSIGN_PUBLIC_IP: string;
};

/** The error statuses CloudFront would cache, which its distributions let one configure. */
const cacheableErrorStatuses = [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504];

/**
 * How long a quiet DevTools connection stays open through the load balancer: a client may hold a
 * leased browser without a message for a long while. The most an ALB allows is 4000 s.
 */
const routerIdleTimeout = Duration.hours(1);

/**
 * Pooled browsers as ECS Fargate tasks, one task per browser, running the same entry and proxy that
 * run locally (`infra/browser-task/Dockerfile`), and the one way to them: CloudFront (`wss://` and
 * `https://` on its default certificate) → a VPC origin → an internal load balancer → the router
 * service → a task's private address. Clients and the pool functions alike go that way, so no
 * function needs the VPC; every call is authorized at the task, by lease token or admin secret.
 */
export class BrowserTasks extends Construct {
  readonly vpc: Vpc;
  readonly cluster: Cluster;
  readonly taskDefinition: FargateTaskDefinition;
  readonly container: ContainerDefinition;
  readonly executionRole: IRole;
  readonly taskSecurityGroup: SecurityGroup;
  readonly routerSecurityGroup: SecurityGroup;
  readonly router: FargateService;
  readonly loadBalancer: ApplicationLoadBalancer;
  readonly distribution: Distribution;
  /** An HMAC key that never leaves KMS: each task's admin secret is its MAC of the task's session id. */
  readonly adminKey: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);

    // Public subnets for the tasks and the router, and no NAT gateway: each gets a public IPv4
    // address for its egress to the web and AWS, since a NAT gateway costs more a month per AZ
    // before any traffic than a small pool's addresses. Security groups keep every inbound
    // connection out but the router's. The load balancer sits in isolated subnets, as CloudFront's
    // VPC origins require.
    this.vpc = new Vpc(this, "Vpc", {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [
        { name: "Public", subnetType: SubnetType.PUBLIC },
        { name: "Internal", subnetType: SubnetType.PRIVATE_ISOLATED },
      ],
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

    // The repository root is the context; .dockerignore keeps it to what the image copies. The
    // router runs from the same image, so a deploy builds one.
    const image = ContainerImage.fromAsset(repoRoot, { file: "infra/browser-task/Dockerfile", platform: Platform.LINUX_AMD64 });
    const logGroup = new LogGroup(this, "Logs", { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });

    // Sized by measuring a browser kept busy by a script-heavy page (`npm run bench -- pools`;
    // the figures and the reasoning are in docs/pools-aws.md, "Cost").
    this.taskDefinition = new FargateTaskDefinition(this, "Task", {
      cpu: 1024,
      memoryLimitMiB: 2048,
      runtimePlatform: { cpuArchitecture: CpuArchitecture.X86_64, operatingSystemFamily: OperatingSystemFamily.LINUX },
    });
    // No task role: a task runs arbitrary web pages and must hold no AWS credentials. CDK always
    // makes one, so it is removed with the definition's reference to it.
    this.taskDefinition.node.tryRemoveChild("TaskRole");
    (this.taskDefinition.node.defaultChild as CfnTaskDefinition).addPropertyDeletionOverride("TaskRoleArn");

    this.container = this.taskDefinition.addContainer("Browser", {
      image,
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
      description: "The router that forwards leased DevTools connections and admin calls to browser tasks",
      allowAllOutbound: false,
    });
    this.taskSecurityGroup = new SecurityGroup(this, "TaskSecurityGroup", {
      vpc: this.vpc,
      description: "Browser tasks: the web outbound, only the router inbound on the proxy port",
      allowAllOutbound: true,
    });
    this.taskSecurityGroup.addIngressRule(this.routerSecurityGroup, Port.tcp(browserTaskPort), "The router, to the lease proxy");
    this.routerSecurityGroup.addEgressRule(this.taskSecurityGroup, Port.tcp(browserTaskPort), "To the browser tasks' lease proxies");
    // HTTPS to AWS: ECS's API to find a task, ECR to pull the image, CloudWatch Logs.
    this.routerSecurityGroup.addEgressRule(Peer.anyIpv4(), Port.tcp(443), "AWS APIs over HTTPS (no NAT gateway, no endpoints)");

    this.router = this.routerService(image, logGroup);
    this.loadBalancer = this.routerLoadBalancer();
    this.distribution = this.routerDistribution();

    this.adminKey = new Key(this, "AdminKey", {
      description: "Derives each pooled browser task's admin secret (HMAC of its session id)",
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    Validations.of(this.adminKey).acknowledge({
      id: "AwsSolutions-KMS5",
      reason: "KMS rotates symmetric encryption keys only; an HMAC key cannot be rotated automatically",
    });
  }

  /** One router task, from the same image, that may only describe this cluster's tasks. */
  private routerService(image: ContainerImage, logGroup: LogGroup): FargateService {
    const definition = new FargateTaskDefinition(this, "RouterTask", {
      cpu: 256,
      memoryLimitMiB: 512,
      runtimePlatform: { cpuArchitecture: CpuArchitecture.X86_64, operatingSystemFamily: OperatingSystemFamily.LINUX },
    });
    definition.addContainer("Router", {
      image,
      entryPoint: ["node", "shared/browsers/router/entry.ts"],
      environment: { BROWSER_CLUSTER_ARN: this.cluster.clusterArn, BROWSER_TASK_PORT: String(browserTaskPort), ROUTER_PORT: String(browserTaskPort) },
      portMappings: [{ containerPort: browserTaskPort }],
      linuxParameters: new LinuxParameters(this, "RouterLinux", { initProcessEnabled: true }),
      logging: LogDrivers.awsLogs({ logGroup, streamPrefix: "router" }),
    });
    Validations.of(definition).acknowledge({ id: "AwsSolutions-ECS2", reason: "The router's settings are where to find tasks and which port to use; none is a secret" });
    const routerTaskExecution = definition.executionRole;
    if (routerTaskExecution) {
      acknowledgeWildcard(
        routerTaskExecution,
        "*",
        "ecr:GetAuthorizationToken has no resource-level permissions; pulling is limited to the asset repository by the other statement",
      );
    }
    this.grantFind(definition.taskRole);
    const service = new FargateService(this, "Router", {
      cluster: this.cluster,
      taskDefinition: definition,
      desiredCount: 1,
      assignPublicIp: true,
      vpcSubnets: { subnetType: SubnetType.PUBLIC },
      securityGroups: [this.routerSecurityGroup],
      minHealthyPercent: 100,
      circuitBreaker: { rollback: true },
    });
    return service;
  }

  /** An internal load balancer in front of the router, in the isolated subnets. */
  private routerLoadBalancer(): ApplicationLoadBalancer {
    const group = new SecurityGroup(this, "LoadBalancerSecurityGroup", {
      vpc: this.vpc,
      description: "The router's internal load balancer: CloudFront's VPC origin in, the router out",
      allowAllOutbound: false,
    });
    // Only from the isolated subnets, where CloudFront's VPC origin places its interfaces: not from
    // the public ones, where browser tasks run pages that could otherwise call the router directly.
    for (const subnet of this.vpc.isolatedSubnets) {
      group.addIngressRule(Peer.ipv4(subnet.ipv4CidrBlock), Port.tcp(80), "CloudFront's VPC origin, from its interfaces in the isolated subnets");
    }
    const loadBalancer = new ApplicationLoadBalancer(this, "LoadBalancer", {
      vpc: this.vpc,
      internetFacing: false,
      vpcSubnets: { subnetType: SubnetType.PRIVATE_ISOLATED },
      securityGroup: group,
      idleTimeout: routerIdleTimeout,
      dropInvalidHeaderFields: true,
    });
    Validations.of(loadBalancer).acknowledge({
      id: "AwsSolutions-ELB2",
      reason: "Access logs would record every DevTools URL, lease token included; the router logs requests without their query",
    });
    const listener = loadBalancer.addListener("Http", { port: 80, protocol: ApplicationProtocol.HTTP, open: false });
    listener.addTargets("Router", {
      port: browserTaskPort,
      protocol: ApplicationProtocol.HTTP,
      targets: [this.router],
      healthCheck: { path: "/health", protocol: Protocol.HTTP, healthyHttpCodes: "200" },
      deregistrationDelay: Duration.seconds(30),
    });
    return loadBalancer;
  }

  /** The one public entry: CloudFront's default certificate gives `https://` and `wss://` without a domain. */
  private routerDistribution(): Distribution {
    const distribution = new Distribution(this, "Distribution", {
      comment: "Pooled browsers: DevTools WebSockets and the pool functions' admin calls, to the router",
      httpVersion: HttpVersion.HTTP1_1,
      defaultBehavior: {
        origin: VpcOrigin.withApplicationLoadBalancer(this.loadBalancer, { protocolPolicy: OriginProtocolPolicy.HTTP_ONLY, readTimeout: Duration.seconds(60) }),
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        // The query (the lease token), the WebSocket headers and Authorization reach the router.
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER,
      },
      // CloudFront keeps error answers for 10 s unless told otherwise, and a launch polls a task's
      // health through it: a task's 404 or 502 must not outlive the moment it was true.
      errorResponses: cacheableErrorStatuses.map((httpStatus) => ({ httpStatus, ttl: Duration.seconds(0) })),
    });
    Validations.of(distribution).acknowledge(
      { id: "AwsSolutions-CFR1", reason: "Browsers are leased by API clients wherever they run; no country is excluded" },
      { id: "AwsSolutions-CFR2", reason: "Every request is authorized at the browser task by a lease token or an admin secret; a WAF would bill per request for DevTools traffic" },
      { id: "AwsSolutions-CFR3", reason: "Access logs would record every DevTools URL, lease token included" },
      { id: "AwsSolutions-CFR4", reason: "The default certificate needs no domain; CloudFront then negotiates TLS 1.2 or later with current clients" },
    );
    return distribution;
  }

  /** Where and how the ECS provider launches and reaches a browser task. */
  get settings(): BrowserTaskSettings {
    return {
      BROWSER_CLUSTER_ARN: this.cluster.clusterArn,
      BROWSER_TASK_DEFINITION_ARN: this.taskDefinition.taskDefinitionArn,
      BROWSER_SUBNETS: this.vpc.publicSubnets.map((subnet) => subnet.subnetId).join(","),
      BROWSER_SECURITY_GROUP: this.taskSecurityGroup.securityGroupId,
      BROWSER_CONTAINER_NAME: this.container.containerName,
      BROWSER_ASSIGN_PUBLIC_IP: "true",
      BROWSER_ROUTER_URL: `https://${this.distribution.distributionDomainName}`,
      BROWSER_ADMIN_KEY_ID: this.adminKey.keyArn,
    };
  }

  /** ARNs of this cluster's tasks, and the condition that keeps a statement to this cluster. */
  private tasksOfCluster() {
    const arn = Stack.of(this).formatArn({ service: "ecs", resource: "task", resourceName: `${this.cluster.clusterName}/*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
    return { arn, inCluster: { ArnEquals: { "ecs:cluster": this.cluster.clusterArn } } };
  }

  /** Lets `grantee` list and describe this cluster's tasks: the router's only AWS calls, to find a task. */
  private grantFind(grantee: IGrantable): void {
    const { arn, inCluster } = this.tasksOfCluster();
    Grant.addToPrincipal({ grantee, actions: ["ecs:DescribeTasks"], resourceArns: [arn], conditions: inCluster });
    this.grantListTasks(grantee);
    this.acknowledgeTaskWildcard(grantee, arn);
  }

  /** ListTasks takes no task resource; the condition keeps it to this cluster. */
  private grantListTasks(grantee: IGrantable): void {
    Grant.addToPrincipal({ grantee, actions: ["ecs:ListTasks"], resourceArns: ["*"], conditions: this.tasksOfCluster().inCluster });
    const principal = grantee.grantPrincipal;
    if (principal instanceof Construct) acknowledgeWildcard(principal, "*", "ecs:ListTasks has no task resource; its ecs:cluster condition limits it to this cluster");
  }

  private acknowledgeTaskWildcard(grantee: IGrantable, arn: string): void {
    const principal = grantee.grantPrincipal;
    if (principal instanceof Construct) acknowledgeWildcard(principal, arn, "task ids are made when a task starts; the statements are limited to this cluster's tasks");
  }

  /**
   * Lets `grantee` lease browsers: stop, describe and list the cluster's tasks, and derive their
   * admin secrets; nothing else of ECS. What the `browsers:lease` grant of the route table gives;
   * running tasks is for the scheduled filler alone (`grantRun`), so that no public route can start
   * tasks.
   */
  grantLease(grantee: IGrantable): void {
    const { arn, inCluster } = this.tasksOfCluster();
    Grant.addToPrincipal({ grantee, actions: ["ecs:StopTask", "ecs:DescribeTasks"], resourceArns: [arn], conditions: inCluster });
    this.grantListTasks(grantee);
    Grant.addToPrincipal({ grantee, actions: ["kms:GenerateMac"], resourceArns: [this.adminKey.keyArn] });
    this.acknowledgeTaskWildcard(grantee, arn);
  }

  /**
   * Lets the scheduled filler launch browsers, beside leasing them: RunTask of this task definition
   * alone (any revision) in this cluster, tagging the tasks it starts, and passing the execution
   * role alone.
   */
  grantRun(grantee: IGrantable): void {
    const { arn, inCluster } = this.tasksOfCluster();
    const family = Stack.of(this).formatArn({
      service: "ecs",
      resource: "task-definition",
      resourceName: `${this.taskDefinition.family}:*`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    Grant.addToPrincipal({ grantee, actions: ["ecs:RunTask"], resourceArns: [family], conditions: inCluster });
    Grant.addToPrincipal({ grantee, actions: ["ecs:TagResource"], resourceArns: [arn], conditions: { StringEquals: { "ecs:CreateAction": "RunTask" } } });
    this.executionRole.grantPassRole(grantee.grantPrincipal);
    const principal = grantee.grantPrincipal;
    if (principal instanceof Construct) acknowledgeWildcard(principal, family, "RunTask names the task definition with its revision; any revision of this family is this stack's");
  }
}
