import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localChromium, unpackedChromium } from "#shared/browsers/local-chromium.ts";
import { provideLocalBrowsers } from "#shared/composition/browsers.ts";
import { provideLocalLoginChromium } from "#shared/composition/login-engine.ts";
import { loadConfig, resourceName } from "#shared/config.ts";
import { generateApiKey } from "#shared/domain/api-keys.ts";
import { services } from "#shared/services.ts";
import { scanConnections } from "#shared/store/connections-store.ts";
import { browsersDir, chromiumDir as chromiumDirOf, keepDataPrivate, localBrowserIsolationProblem } from "./browser-isolation.ts";
import { ensureTable, startDynamoDbLocal } from "./dynamodb-local.ts";
import { startGateway } from "./gateway.ts";
import { startPoolSupervisor } from "./pool-supervisor.ts";
import { ensureBucket, startS3Local } from "./s3-local.ts";
import { useStandInCredentials } from "./stand-in-credentials.ts";
import { startLocalStepFunctions } from "./step-functions.ts";

export const localOrg = "local";

export interface LocalStackOptions {
  port: number;
  /** Persist data here across restarts; without it, everything lives in memory. */
  dataDir?: string;
  apiKey?: string;
  tableName?: string;
  bucketName?: string;
  /** Use an already running DynamoDB Local (tests share one) instead of starting one. */
  dynamoEndpoint?: string;
  /** Use an already running s3rver (tests share one) instead of starting one. */
  s3Endpoint?: string;
  /**
   * Serve the org `local` alone where pooled browsers cannot be isolated from one another (npm
   * start); tests, which run many orgs on loopback, leave it off.
   */
  oneOrgUnlessIsolated?: boolean;
  /** Workflow settings for tests (otherwise LOCAL_TIME_SCALE and WORKFLOW_MAX_ITERATIONS from the environment). */
  workflow?: { timeScale?: number; maxIterations?: number };
}

export interface LocalStack {
  url: string;
  apiKey: string;
  dynamoEndpoint: string;
  s3Endpoint: string;
  sfnEndpoint: string;
  tableName: string;
  /** Why pooled browsers do not run each as a user of its own here, or undefined where they do. */
  browserIsolationProblem: string | undefined;
  stop(): Promise<void>;
}

const alreadyRunning = (endpoint: string) => ({ endpoint, stop: async () => {} });

/**
 * The whole service on one machine: DynamoDB Local, s3rver, the table and bucket CDK would
 * create, an API key for the `local` org, and the gateway mounting the deployed handler files.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  useStandInCredentials();
  if (options.dataDir) keepDataPrivate(options.dataDir);
  const s3 = options.s3Endpoint
    ? alreadyRunning(options.s3Endpoint)
    : await startS3Local({ dataDir: options.dataDir && join(options.dataDir, "s3") });
  const dynamo = options.dynamoEndpoint
    ? alreadyRunning(options.dynamoEndpoint)
    : await startDynamoDbLocal({ dataDir: options.dataDir && join(options.dataDir, "dynamodb") }).catch(async (error: unknown) => {
        await s3.stop();
        throw error;
      });
  const standIns: { stop(): Promise<void> }[] = [dynamo, s3];
  // In reverse order of start: executions stop before the database they write to.
  const stopStandIns = async () => {
    for (const standIn of [...standIns].reverse()) await standIn.stop();
  };
  try {
    // Kept under the data dir so a restarted stack finds, and ends, the browsers a crash left.
    const browserDir = options.dataDir ? browsersDir(options.dataDir) : mkdtempSync(join(tmpdir(), "acs-browsers-"));
    if (!options.dataDir) standIns.unshift({ stop: async () => rmSync(browserDir, { recursive: true, force: true }) });
    // Chromium is unpacked in a directory of this stack's alone: the package would reuse a shared /tmp/chromium.
    const chromiumDir = options.dataDir ? chromiumDirOf(options.dataDir) : mkdtempSync(join(tmpdir(), "acs-chromium-"));
    if (!options.dataDir) standIns.unshift({ stop: async () => rmSync(chromiumDir, { recursive: true, force: true }) });
    // Kept with the data: a new key would leave the stored credentials unreadable.
    const secretsDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "acs-secrets-"));
    if (!options.dataDir) standIns.unshift({ stop: async () => rmSync(secretsDir, { recursive: true, force: true }) });
    const tableName = options.tableName ?? "auth-connections";
    const bucketName = options.bucketName ?? "auth-connection-profiles";
    await ensureTable(dynamo.endpoint, tableName);
    await ensureBucket(s3.endpoint, bucketName);
    // The handlers read their configuration from the environment, as they do in Lambda.
    Object.assign(process.env, {
      DEPLOYMENT_MODE: "local",
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      BUCKET_NAME: bucketName,
      S3_ENDPOINT: s3.endpoint,
      AWS_REGION: process.env.AWS_REGION ?? "us-east-1",
      BROWSER_DATA_DIR: browserDir,
      SECRETS_KEY_FILE: join(secretsDir, "secrets.key"),
      ...(options.workflow?.timeScale ? { LOCAL_TIME_SCALE: String(options.workflow.timeScale) } : {}),
      ...(options.workflow?.maxIterations ? { WORKFLOW_MAX_ITERATIONS: String(options.workflow.maxIterations) } : {}),
    });
    const config = loadConfig();
    const stepFunctions = await startLocalStepFunctions({ stateMachineArn: resourceName(config, "STATE_MACHINE_ARN"), timeScale: config.LOCAL_TIME_SCALE });
    standIns.push(stepFunctions);
    process.env.SFN_ENDPOINT = stepFunctions.endpoint;
    // The stand-ins answer whoever reaches them (the gateway asks for a key): no browser's page may.
    const deniedPorts = [dynamo.endpoint, s3.endpoint, stepFunctions.endpoint].map((endpoint) => Number(new URL(endpoint).port));
    provideLocalBrowsers((config) =>
      localChromium({ root: config.BROWSER_DATA_DIR ?? browserDir, unpackDir: chromiumDir, executable: config.BROWSER_EXECUTABLE, deniedPorts }),
    );
    let loginChromium: Promise<string> | undefined;
    provideLocalLoginChromium(() => (loginChromium ??= config.BROWSER_EXECUTABLE ? Promise.resolve(config.BROWSER_EXECUTABLE) : unpackedChromium(chromiumDir)));
    const apiKey = options.apiKey ?? persistentApiKey(options.dataDir);
    await services().apiKeys.register(localOrg, apiKey);
    const browserIsolationProblem = await localBrowserIsolationProblem(options.dataDir);
    const gateway = await startGateway({ port: options.port, onlyOrg: options.oneOrgUnlessIsolated && browserIsolationProblem ? localOrg : undefined });
    await resumeWorkflows();
    const poolSupervisor = startPoolSupervisor(services().poolFiller);
    return {
      url: gateway.url,
      apiKey,
      dynamoEndpoint: dynamo.endpoint,
      s3Endpoint: s3.endpoint,
      sfnEndpoint: stepFunctions.endpoint,
      tableName,
      browserIsolationProblem,
      async stop() {
        gateway.server.closeAllConnections();
        await new Promise((done) => gateway.server.close(done));
        await poolSupervisor.stop();
        await stopStandIns();
      },
    };
  } catch (error) {
    await stopStandIns();
    throw error;
  }
}

/** Local executions lived in the previous process's memory: give every connection a new one. */
async function resumeWorkflows(): Promise<void> {
  const core = services();
  for (const connection of await scanConnections(core.db, resourceName(core.config, "TABLE_NAME"))) {
    await core.workflow.resume(connection);
  }
}

/** Made on first start and kept, so a restarted service answers to the key the user saved. */
function persistentApiKey(dataDir: string | undefined): string {
  if (!dataDir) return generateApiKey();
  const file = join(dataDir, "api-key");
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    const key = generateApiKey();
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${key}\n`, { mode: 0o600 });
    return key;
  }
}
