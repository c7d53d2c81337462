/**
 * A fresh service process for the login bench's cold browser flows: the local stack (gateway,
 * Step Functions runner, the service's code) on the bench's DynamoDB Local and s3rver, in a table
 * of its own, with `dataDir` holding its Chromium unpack, browsers and secrets key. It sends its
 * gateway's URL over IPC once it listens, and stops when told to.
 */
import { startLocalStack } from "../infra/local/stack.ts";

export interface ServiceProcessOptions {
  dataDir: string;
  dynamoEndpoint: string;
  s3Endpoint: string;
  apiKey: string;
  tableName: string;
}

const send = process.send?.bind(process);
if (!send) throw new Error("service-process.ts runs as a child with an IPC channel");

const options = JSON.parse(process.argv[2] ?? "{}") as ServiceProcessOptions;
const stack = await startLocalStack({ port: 0, ...options });
send({ url: stack.url });
process.once("message", async () => {
  await stack.stop();
  process.disconnect();
});
