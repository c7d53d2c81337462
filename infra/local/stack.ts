import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Server } from "node:http";
import { generateApiKey } from "#shared/domain/api-keys.ts";
import { services } from "#shared/services.ts";
import { ensureTable, startDynamoDbLocal } from "./dynamodb-local.ts";
import { startGateway } from "./gateway.ts";
import { ensureBucket, startS3Local } from "./s3-local.ts";

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
}

export interface LocalStack {
  url: string;
  apiKey: string;
  dynamoEndpoint: string;
  s3Endpoint: string;
  stop(): Promise<void>;
}

const alreadyRunning = (endpoint: string) => ({ endpoint, stop: async () => {} });

/**
 * The whole service on one machine: DynamoDB Local, s3rver, the table and bucket CDK would
 * create, an API key for the `local` org, and the gateway mounting the deployed handler files.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const s3 = options.s3Endpoint
    ? alreadyRunning(options.s3Endpoint)
    : await startS3Local({ dataDir: options.dataDir && join(options.dataDir, "s3") });
  const dynamo = options.dynamoEndpoint
    ? alreadyRunning(options.dynamoEndpoint)
    : await startDynamoDbLocal({ dataDir: options.dataDir && join(options.dataDir, "dynamodb") }).catch(async (error: unknown) => {
        await s3.stop();
        throw error;
      });
  const stopStandIns = () => Promise.all([dynamo.stop(), s3.stop()]).then(() => undefined);
  try {
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
    });
    const apiKey = options.apiKey ?? persistentApiKey(options.dataDir);
    await services().apiKeys.register(localOrg, apiKey);
    const gateway = await startGateway({ port: options.port });
    return {
      url: gateway.url,
      apiKey,
      dynamoEndpoint: dynamo.endpoint,
      s3Endpoint: s3.endpoint,
      async stop() {
        gateway.server.closeAllConnections();
        await new Promise((done) => gateway.server.close(done));
        await stopStandIns();
      },
    };
  } catch (error) {
    await stopStandIns();
    throw error;
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
