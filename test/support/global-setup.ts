import type { TestProject } from "vitest/node";
import { startDynamoDbLocal } from "../../infra/local/dynamodb-local.ts";
import { startS3Local } from "../../infra/local/s3-local.ts";
import { useStandInCredentials } from "../../infra/local/stand-in-credentials.ts";

declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    s3Endpoint: string;
  }
}

/**
 * One in-memory DynamoDB Local and one s3rver on a temp dir for the whole run; each test file
 * works in its own table, bucket or org.
 */
export default async function setup(project: TestProject) {
  // Test files build their own clients to the stand-ins; their processes inherit this environment.
  useStandInCredentials();
  // s3rver first: it runs in-process, so a failure here leaves no Java child behind.
  const s3 = await startS3Local();
  project.provide("s3Endpoint", s3.endpoint);
  const dynamo = await startDynamoDbLocal();
  project.provide("dynamoEndpoint", dynamo.endpoint);
  return async () => {
    await Promise.all([dynamo.stop(), s3.stop()]);
  };
}
