import { Duration, RemovalPolicy, Size, Validations } from "aws-cdk-lib";
import type { ITable } from "aws-cdk-lib/aws-dynamodb";
import type { IKey } from "aws-cdk-lib/aws-kms";
import { PolicyStatement, Role, ServicePrincipal } from "aws-cdk-lib/aws-iam";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { LogLevel, NodejsFunction, OutputFormat, type BundlingOptions } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import type { IBucket } from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import { fileURLToPath } from "node:url";
import type { Config } from "#shared/config.ts";
import type { Grant } from "#shared/grants.ts";
import { awsSdkModules, browserPackages, lambdaBundle } from "./bundling.ts";
import type { BrowserTasks } from "./browser-tasks.ts";
import { acknowledgeWildcard } from "./nag.ts";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
/** Completes a function's asset beside its index.mjs: thread workers, files read at run time, shipped packages. */
const afterBundlingScript = fileURLToPath(new URL("./after-bundling.ts", import.meta.url));
const shellQuoted = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;
// With the Node that runs the synth, which runs TypeScript.
const nodeCommand = (...args: string[]) => [process.execPath, ...args].map(shellQuoted).join(" ");

/** `shipped`: the packages the bundle leaves out and the asset carries, as installed, in its own node_modules. */
function bundlingShipping(shipped: readonly string[]): BundlingOptions {
  return {
    format: { esm: OutputFormat.ESM }[lambdaBundle.format],
    target: lambdaBundle.target,
    minify: lambdaBundle.minify,
    sourceMap: lambdaBundle.sourcemap,
    sourcesContent: lambdaBundle.sourcesContent,
    mainFields: [...lambdaBundle.mainFields],
    banner: lambdaBundle.banner,
    bundleAwsSDK: lambdaBundle.bundleAwsSdk,
    externalModules: [...(lambdaBundle.bundleAwsSdk ? [] : awsSdkModules), ...shipped],
    // The locally installed esbuild: synth stays offline and needs no Docker.
    forceDockerBundling: false,
    // Warnings and errors only: a size table per function would bury synth's and deploy's own output (bench/bundles.ts measures the sizes).
    logLevel: LogLevel.WARNING,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      // One Node process per function, for every step.
      afterBundling: (_inputDir, outputDir) => [nodeCommand(afterBundlingScript, outputDir, ...shipped)],
    },
  };
}

/**
 * What Chromium needs beside Node in a function that runs the login browser. `@sparticuz/chromium`'s
 * package holds an x86_64 Chromium only. Lambda gives CPU in proportion to memory (one full vCPU at
 * 1769 MB): 2048 MB holds Chromium with a script-heavy page next to Node and gives it a little over
 * one vCPU to lay out and run the page's script with, where the other functions' 1024 MB would give
 * it about half of one. /tmp holds the unpacked Chromium (kept across warm invocations), each flow's
 * profile directory and a recorded session's trace: twice Lambda's default 512 MB gives them room at
 * a negligible price (docs/login-engines.md).
 */
const browserRuntime = {
  architecture: Architecture.X86_64,
  memorySize: 2048,
  ephemeralStorageSize: Size.mebibytes(1024),
  bundling: bundlingShipping(browserPackages),
};

const serviceRuntime = {
  architecture: Architecture.ARM_64,
  memorySize: 1024,
  ephemeralStorageSize: undefined,
  bundling: bundlingShipping([]),
};

/** What a function's grants refer to, and the configuration every function runs with. */
export interface FunctionResources {
  table: ITable;
  bucket: IBucket;
  /** The secret box's KMS key: its data keys encrypt credentials and login state. */
  secretsKey: IKey;
  stateMachineArn: string;
  /** Matches every execution of the state machine. */
  executionsArn: string;
  /** Every function gets the whole configuration: the composition root builds every client at once. */
  environment: Partial<Record<keyof Config, string>>;
  /** Present in a stack deployed with pools: what `browsers:lease` grants, and the settings it adds. */
  browserTasks?: BrowserTasks;
}

export interface ServiceFunctionProps {
  /** The handler file, relative to the repository root, as the route table and task map name it. */
  handler: string;
  description: string;
  grants: readonly Grant[];
  resources: FunctionResources;
  timeout?: Duration;
  /** Concurrency reserved for the function, and its most at once; none when absent. */
  reservedConcurrency?: number;
  /** The function runs the login browser (see `browserRuntime`). */
  runsBrowser?: boolean;
}

/**
 * One Lambda with its own role and log group. The role holds exactly what `grants` names, so the
 * route table (or the task map) decides each function's access and nothing else adds to it.
 */
export class ServiceFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    // Its own role rather than Lambda's default, which attaches the managed basic-execution policy.
    this.role = new Role(this, "Role", { assumedBy: new ServicePrincipal("lambda.amazonaws.com") });
    const logGroup = new LogGroup(this, "Logs", { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    logGroup.grantWrite(this.role);

    const runtime = props.runsBrowser ? browserRuntime : serviceRuntime;
    this.function = new NodejsFunction(this, "Function", {
      entry: `${repoRoot}${props.handler}`,
      handler: "handler",
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: runtime.architecture,
      memorySize: runtime.memorySize,
      ephemeralStorageSize: runtime.ephemeralStorageSize,
      timeout: props.timeout ?? Duration.seconds(29),
      reservedConcurrentExecutions: props.reservedConcurrency,
      role: this.role,
      logGroup,
      environment: { ...props.resources.environment, NODE_OPTIONS: "--enable-source-maps" },
      projectRoot: repoRoot,
      depsLockFilePath: `${repoRoot}package-lock.json`,
      bundling: runtime.bundling,
    });
    for (const grant of props.grants) this.grant(grant, props.resources);

    Validations.of(this.function).acknowledge({
      id: "AwsSolutions-L1",
      reason: "Node 22 is the project's runtime: the code runs on Node 22's type stripping and package.json pins engines to 22.",
    });
  }

  private grant(grant: Grant, { table, bucket, secretsKey, stateMachineArn, executionsArn, browserTasks }: FunctionResources): void {
    switch (grant) {
      case "table:read":
        table.grantReadData(this.role);
        this.acknowledgeIndexes(table);
        return;
      case "table:write":
        table.grantWriteData(this.role);
        this.acknowledgeIndexes(table);
        return;
      case "archives:read":
        this.grantArchiveObjects(["s3:GetObject"], bucket);
        // Without it S3 answers a missing archive with 403 instead of NoSuchKey, which the store maps to 404.
        this.role.addToPolicy(new PolicyStatement({ actions: ["s3:ListBucket"], resources: [bucket.bucketArn] }));
        return;
      case "archives:write":
        this.grantArchiveObjects(["s3:PutObject", "s3:DeleteObject"], bucket);
        return;
      case "workflow:start":
        this.role.addToPolicy(new PolicyStatement({ actions: ["states:StartExecution"], resources: [stateMachineArn] }));
        return;
      case "workflow:stop":
        this.role.addToPolicy(new PolicyStatement({ actions: ["states:StopExecution"], resources: [executionsArn] }));
        acknowledgeWildcard(this.role, executionsArn, "Executions are named per connection at run time; the pattern covers this state machine's executions only.");
        return;
      case "workflow:signal":
        this.role.addToPolicy(new PolicyStatement({ actions: ["states:SendTaskSuccess", "states:SendTaskFailure"], resources: [stateMachineArn] }));
        return;
      case "browsers:lease":
        if (!browserTasks) return;
        browserTasks.grantLease(this.role);
        for (const [name, value] of Object.entries(browserTasks.settings)) this.function.addEnvironment(name, value);
        return;
      case "secrets:use":
        // A data key per seal, and its decryption to open: nothing else on the key.
        this.role.addToPolicy(new PolicyStatement({ actions: ["kms:GenerateDataKey", "kms:Decrypt"], resources: [secretsKey.keyArn] }));
        return;
      default: {
        const unknown: never = grant;
        throw new Error(`no IAM mapping for grant ${String(unknown)}`);
      }
    }
  }

  /** CDK's table grants also cover the table's indexes, named by one wildcard. */
  private acknowledgeIndexes(table: ITable): void {
    acknowledgeWildcard(this.role, `${table.tableArn}/index/*`, "The grant covers this table's own overloaded indexes (gsi1..gsi3); no other table.");
  }

  /** The bucket holds nothing but profile archives, so its objects are the archives. */
  private grantArchiveObjects(actions: string[], bucket: IBucket): void {
    const objects = bucket.arnForObjects("*");
    this.role.addToPolicy(new PolicyStatement({ actions, resources: [objects] }));
    acknowledgeWildcard(this.role, objects, "Archive keys are per org and profile, made at run time; the bucket holds only archives.");
  }
}
