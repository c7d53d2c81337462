import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ensureTable, startDynamoDbLocal } from "../infra/local/dynamodb-local.ts";
import { runningInstance } from "../infra/local/running.ts";
import { useStandInCredentials } from "../infra/local/stand-in-credentials.ts";
import { apiKeys } from "#shared/composition/api-keys.ts";
import { loadConfig } from "#shared/config.ts";
import { AppError } from "#shared/domain/errors.ts";

const usage = `Mints an API key for an org and prints it once; only its hash is stored.

  npm run api-key -- --org <name>          into the local service's data (DATA_DIR, default .data)
  npm run api-key -- --org <name> --aws    into the deployed table (TABLE_NAME, AWS_REGION and AWS credentials from the environment)
`;

const { values } = parseArgs({ options: { org: { type: "string" }, aws: { type: "boolean", default: false }, help: { type: "boolean" } } });
if (values.help || !values.org) {
  process.stdout.write(usage);
  process.exit(values.help ? 0 : 2);
}

async function mintLocally(org: string): Promise<string> {
  useStandInCredentials();
  const dataDir = resolve(process.env.DATA_DIR ?? ".data");
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
  const key = values.aws ? await apiKeys(loadConfig()).mint(values.org) : await mintLocally(values.org);
  process.stdout.write(`API key for org '${values.org}' (shown once, keep it safe):\n${key}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof AppError ? error.message : String(error)}\n`);
  process.exit(1);
}
