import { resolve } from "node:path";
import { localBrowserIsolationProblem, oneOrgOnly } from "../infra/local/browser-isolation.ts";
import { ensureTable, startDynamoDbLocal } from "../infra/local/dynamodb-local.ts";
import { localOrg } from "../infra/local/stack.ts";
import { runningInstance } from "../infra/local/running.ts";
import { apiKeyUsage, parseApiKeyArgs } from "./api-key-args.ts";
import { useStandInCredentials } from "../infra/local/stand-in-credentials.ts";
import { apiKeys } from "#shared/composition/api-keys.ts";
import { loadConfig } from "#shared/config.ts";
import { AppError } from "#shared/errors.ts";

const command = parseApiKeyArgs(process.argv.slice(2));
if ("usage" in command) {
  const { exitCode, problem } = command.usage;
  if (problem) process.stderr.write(`${problem}\n\n`);
  (exitCode === 0 ? process.stdout : process.stderr).write(apiKeyUsage);
  process.exit(exitCode);
}
const { org, into } = command.mint;

async function mintLocally(org: string): Promise<string> {
  useStandInCredentials();
  const dataDir = resolve(process.env.DATA_DIR ?? ".data");
  const problem = org === localOrg ? undefined : await localBrowserIsolationProblem(dataDir);
  if (problem) throw new Error(`no key minted for the org '${org}': ${oneOrgOnly(problem)}`);
  const tableName = "auth-connections";
  const running = runningInstance(dataDir);
  // DynamoDB Local holds its files open: use the running service's database when there is one.
  const dynamo = running?.dynamoEndpoint
    ? { endpoint: running.dynamoEndpoint, stop: async () => {} }
    : await startDynamoDbLocal({ dataDir: resolve(dataDir, "dynamodb") });
  try {
    await ensureTable(dynamo.endpoint, tableName);
    const config = loadConfig({ DEPLOYMENT_MODE: "local", TABLE_NAME: tableName, DYNAMODB_ENDPOINT: dynamo.endpoint });
    return await apiKeys(config).mint(org);
  } finally {
    await dynamo.stop();
  }
}

try {
  const key = into === "aws" ? await apiKeys(loadConfig()).mint(org) : await mintLocally(org);
  process.stdout.write(`API key for org '${org}' (shown once, keep it safe):\n${key}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof AppError ? error.message : String(error)}\n`);
  process.exit(1);
}
