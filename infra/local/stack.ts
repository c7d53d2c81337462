import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Server } from "node:http";
import { generateApiKey } from "#shared/domain/api-keys.ts";
import { services } from "#shared/services.ts";
import { ensureTable, startDynamoDbLocal } from "./dynamodb-local.ts";
import { startGateway } from "./gateway.ts";

export const localOrg = "local";

export interface LocalStackOptions {
  port: number;
  /** Persist data here across restarts; without it, everything lives in memory. */
  dataDir?: string;
  apiKey?: string;
  tableName?: string;
  /** Use an already running DynamoDB Local (tests share one) instead of starting one. */
  dynamoEndpoint?: string;
}

export interface LocalStack {
  url: string;
  apiKey: string;
  dynamoEndpoint: string;
  stop(): Promise<void>;
}

/**
 * The whole service on one machine: DynamoDB Local, the table CDK would create, an API key for
 * the `local` org, and the gateway mounting the deployed handler files.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const dynamo = options.dynamoEndpoint
    ? { endpoint: options.dynamoEndpoint, stop: async () => {} }
    : await startDynamoDbLocal({ dataDir: options.dataDir && join(options.dataDir, "dynamodb") });
  try {
    const tableName = options.tableName ?? "auth-connections";
    await ensureTable(dynamo.endpoint, tableName);
    // The handlers read their configuration from the environment, as they do in Lambda.
    Object.assign(process.env, {
      DEPLOYMENT_MODE: "local",
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      AWS_REGION: process.env.AWS_REGION ?? "us-east-1",
    });
    const apiKey = options.apiKey ?? persistentApiKey(options.dataDir);
    await services().apiKeys.register(localOrg, apiKey);
    const gateway = await startGateway({ port: options.port });
    return {
      url: gateway.url,
      apiKey,
      dynamoEndpoint: dynamo.endpoint,
      async stop() {
        gateway.server.closeAllConnections();
        await new Promise((done) => gateway.server.close(done));
        await dynamo.stop();
      },
    };
  } catch (error) {
    await dynamo.stop();
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
