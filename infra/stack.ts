import { CfnOutput, Duration, Stack, Validations, type App, type StackProps } from "aws-cdk-lib";
import { Schedule, ScheduleExpression } from "aws-cdk-lib/aws-scheduler";
import { LambdaInvoke } from "aws-cdk-lib/aws-scheduler-targets";
import { Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { AwsSolutionsChecks } from "cdk-nag";
import type { Construct } from "constructs";
import { Api } from "./constructs/api.ts";
import { acknowledgeWildcard } from "./constructs/nag.ts";
import { BrowserTasks } from "./constructs/browser-tasks.ts";
import { Observability } from "./constructs/observability.ts";
import { ServiceFunction, type FunctionResources } from "./constructs/service-function.ts";
import { Storage } from "./constructs/storage.ts";
import { ConnectionWorkflow, workflowArns } from "./constructs/workflow.ts";
import { scheduledFillerIntervalMinutes } from "#shared/composition/pools.ts";
import { loadConfig, type Config } from "#shared/config.ts";

/** Read by the authorizer's cache and by the functions' in-process key cache alike. */
const apiKeyCacheSeconds = 60;

/**
 * The settings a deployer gives at deploy time as CDK context (`npx cdk deploy -c
 * REDIRECT_ORIGINS=https://app.example.com`); every function gets those given. They are checked as
 * the functions will read them, so a bad value fails the synth rather than every request.
 */
const deployerSettings = ["PUBLIC_BASE_URL", "REDIRECT_ORIGINS", "ALLOWED_ORIGINS", "FRAME_ANCESTORS"] as const satisfies readonly (keyof Config)[];

/** The settings given, for the functions' environment, and the config they make, for the parts fixed at synth. */
function deployerSettingsGiven(scope: Construct): { environment: Partial<Record<(typeof deployerSettings)[number], string>>; config: Config } {
  const environment = Object.fromEntries(
    deployerSettings.flatMap((name) => {
      const value: unknown = scope.node.tryGetContext(name);
      return value === undefined ? [] : [[name, String(value)]];
    }),
  );
  return { environment, config: loadConfig(environment) };
}

/**
 * Pooled browsers in AWS (ECS Fargate) are a preview, off unless the deployer gives `-c POOLS=true`:
 * their image is built by Docker at deploy, and a pool-less deploy needs no Docker.
 */
function poolsEnabled(scope: Construct): boolean {
  const value: unknown = scope.node.tryGetContext("POOLS");
  return value === true || value === "true";
}

/**
 * `-c RESERVED_STREAM_CONCURRENCY=<n>` changes the concurrency reserved for the event stream's
 * function (the route table's, 50, when absent); `none` reserves nothing, for an account at Lambda's
 * default concurrency limit, which has none to reserve and whose deploy would fail.
 */
function streamConcurrency(scope: Construct): number | "none" | undefined {
  const value: unknown = scope.node.tryGetContext("RESERVED_STREAM_CONCURRENCY");
  if (value === undefined || value === "none") return value;
  const concurrency = Number(value);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error(`RESERVED_STREAM_CONCURRENCY: expected a whole number of at least 1, or "none"; got '${String(value)}'`);
  }
  return concurrency;
}

/** The whole service: storage (retained), the connection workflow, the API and its dashboard. */
export class AuthConnectionStack extends Stack {
  readonly storage: Storage;
  readonly workflow: ConnectionWorkflow;
  readonly api: Api;
  readonly observability: Observability;
  /** Present only when the stack is synthesized with `POOLS=true`. */
  readonly browserTasks: BrowserTasks | undefined;
  /** The scheduled function that keeps pools filled; present with `browserTasks`. */
  readonly poolFiller: ServiceFunction | undefined;

  constructor(scope: Construct, id: string, props?: StackProps) {
    super(scope, id, props);
    this.storage = new Storage(this, "Storage");
    const stateMachineName = `${this.stackName}-connections`;
    const { stateMachineArn, executionsArn } = workflowArns(this, stateMachineName);
    const deployer = deployerSettingsGiven(this);
    this.browserTasks = poolsEnabled(this) ? new BrowserTasks(this, "BrowserTasks") : undefined;
    const resources: FunctionResources = {
      table: this.storage.table,
      bucket: this.storage.bucket,
      secretsKey: this.storage.credentialsKey,
      stateMachineArn,
      executionsArn,
      environment: {
        DEPLOYMENT_MODE: "aws",
        TABLE_NAME: this.storage.table.tableName,
        BUCKET_NAME: this.storage.bucket.bucketName,
        STATE_MACHINE_ARN: stateMachineArn,
        KMS_KEY_ID: this.storage.credentialsKey.keyArn,
        API_KEY_CACHE_SECONDS: String(apiKeyCacheSeconds),
        ...deployer.environment,
      },
      browserTasks: this.browserTasks,
    };
    this.workflow = new ConnectionWorkflow(this, "Workflow", { stateMachineName, resources });
    this.api = new Api(this, "Api", {
      resources,
      keyCacheTtl: Duration.seconds(apiKeyCacheSeconds),
      throttle: { rateLimit: 50, burstLimit: 100 },
      allowedOrigins: deployer.config.ALLOWED_ORIGINS,
      streamConcurrency: streamConcurrency(this),
    });
    this.poolFiller = this.browserTasks && this.scheduledPoolFiller(this.browserTasks, resources);
    this.observability = new Observability(this, "Observability", {
      dashboardName: this.stackName,
      restApi: this.api.restApi,
      accessLogs: this.api.accessLogs,
      routes: this.api.routeFunctions,
      stateMachine: this.workflow.stateMachine,
      healthCheck: this.workflow.tasks.HealthCheck.function,
      functions: [
        this.api.authorizerFunction.function,
        this.api.preflightFunction.function,
        ...this.api.routeFunctions.map(({ handler }) => handler.function),
        ...Object.values(this.workflow.tasks).map((task) => task.function),
        ...(this.poolFiller ? [this.poolFiller.function] : []),
      ],
    });

    new CfnOutput(this, "ApiUrl", { value: this.api.restApi.url });
    if (this.browserTasks) new CfnOutput(this, "BrowserRouterUrl", { value: this.browserTasks.settings.BROWSER_ROUTER_URL });
    new CfnOutput(this, "TableName", { value: this.storage.table.tableName });
    new CfnOutput(this, "BucketName", { value: this.storage.bucket.bucketName });
    new CfnOutput(this, "StateMachineArn", { value: this.workflow.stateMachine.stateMachineArn });
    new CfnOutput(this, "CredentialsKeyArn", { value: this.storage.credentialsKey.keyArn });
    new CfnOutput(this, "DashboardUrl", {
      value: `https://${this.region}.console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.observability.dashboard.dashboardName}`,
    });
  }

  /**
   * The pool filler as a function that EventBridge Scheduler runs once a minute: one pass per run,
   * one pass at a time (claimed in the table, without a reserved concurrency, which an account at
   * Lambda's default limit could not spare), and a run that could not start within the minute is
   * dropped, since the next one does its work.
   */
  private scheduledPoolFiller(browserTasks: BrowserTasks, resources: FunctionResources): ServiceFunction {
    const filler = new ServiceFunction(this, "FillBrowserPools", {
      handler: "functions/scheduled/fill-browser-pools.ts",
      description: "Keeps browser pools filled: functions/scheduled/fill-browser-pools.ts",
      grants: ["table:read", "table:write", "browsers:lease"],
      resources,
      // A launch waits for its task to run and its browser to answer.
      timeout: Duration.minutes(5),
    });
    browserTasks.grantRun(filler.function);
    filler.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    const schedulerRole = new Role(this, "FillBrowserPoolsScheduleRole", { assumedBy: new ServicePrincipal("scheduler.amazonaws.com") });
    new Schedule(this, "FillBrowserPoolsSchedule", {
      description: "One pass of the browser pool filler",
      schedule: ScheduleExpression.rate(Duration.minutes(scheduledFillerIntervalMinutes)),
      target: new LambdaInvoke(filler.function, { retryAttempts: 0, role: schedulerRole }),
    });
    acknowledgeWildcard(schedulerRole, `${filler.function.functionArn}:*`, "Scheduler's Lambda target grants the function's versions and aliases too; this function has none");
    return filler;
  }
}

/** The deployed app and the tests build the stack the same way, cdk-nag checks included. */
export function authConnectionApp(app: App, props?: StackProps): AuthConnectionStack {
  const stack = new AuthConnectionStack(app, "AuthConnectionService", props);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return stack;
}
