import Kernel from "@onkernel/sdk";
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { tableClient } from "#shared/composition/table.ts";
import { loadConfig } from "#shared/config.ts";
import { startLocalStack, type LocalStack, type LocalStackOptions } from "../../infra/local/stack.ts";

/** The local runtime (gateway + handlers) on the shared stand-ins, in a table and bucket of its own. */
export async function startTestStack(workflow?: LocalStackOptions["workflow"]): Promise<LocalStack & { tableName: string }> {
  const tableName = `test-${randomBytes(6).toString("hex")}`;
  const stack = await startLocalStack({
    port: 0,
    dynamoEndpoint: inject("dynamoEndpoint"),
    s3Endpoint: inject("s3Endpoint"),
    tableName,
    bucketName: tableName,
    workflow,
  });
  return { ...stack, tableName };
}

/** The service's own table client, aimed at a DynamoDB Local of the tests'. */
export function tableClientAt(endpoint: string) {
  return tableClient(loadConfig({ ...process.env, DYNAMODB_ENDPOINT: endpoint }));
}

export function officialClient(stack: LocalStack): Kernel {
  return new Kernel({ baseURL: stack.url, apiKey: stack.apiKey });
}
