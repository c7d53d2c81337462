import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { ensureTable } from "../../infra/local/dynamodb-local.ts";
import { loadConfig } from "#shared/config.ts";
import { buildServices, type Services } from "#shared/services.ts";

/** The real core and DynamoDB adapters, on the shared DynamoDB Local, in a fresh table. */
export async function servicesOnFreshTable(): Promise<Services & { tableName: string }> {
  const tableName = `test-${randomBytes(6).toString("hex")}`;
  const endpoint = inject("dynamoEndpoint");
  await ensureTable(endpoint, tableName);
  const config = loadConfig({ DEPLOYMENT_MODE: "local", TABLE_NAME: tableName, DYNAMODB_ENDPOINT: endpoint });
  return { ...buildServices(config), tableName };
}

export function uniqueOrg(): string {
  return `org-${randomBytes(4).toString("hex")}`;
}
