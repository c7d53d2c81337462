import { createServer } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { archives } from "#shared/composition/archives.ts";
import { secretBox } from "#shared/composition/secrets.ts";
import { connectionStore } from "#shared/composition/table.ts";
import { workflowEngine } from "#shared/composition/workflow-engine.ts";
import { loadConfig } from "#shared/config.ts";
import { ServiceUnavailableError } from "#shared/domain/errors.ts";
import { fakeAwsService } from "../support/fake-aws-service.ts";

/** A loopback port that nothing listens on: every connection to it is refused. */
async function refusedEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const { port } = server.address() as { port: number };
  await new Promise((closed) => server.close(closed));
  return `http://127.0.0.1:${port}`;
}

let refused: string;
let table: Awaited<ReturnType<typeof fakeAwsService>>;
let answer: { status: number; type: string };

beforeAll(async () => {
  refused = await refusedEndpoint();
  table = await fakeAwsService(() => ({ status: answer.status, body: { __type: `com.amazonaws.dynamodb.v20120810#${answer.type}`, message: "from the test" } }));
});

afterAll(() => table?.server.close());
afterEach(() => vi.unstubAllEnvs());

/** As the stack deploys a function: in AWS mode, pointed at its table, bucket and state machine. */
const deployedResources = {
  TABLE_NAME: "auth-connections",
  BUCKET_NAME: "auth-connection-profiles",
  STATE_MACHINE_ARN: "arn:aws:states:us-east-1:000000000000:stateMachine:connection-workflow",
};
const configWith = (settings: Record<string, string>) => loadConfig({ ...process.env, ...deployedResources, ...settings });

describe("a dependency that cannot be reached is reported as service_unavailable", () => {
  it("DynamoDB", async () => {
    await expect(connectionStore(configWith({ DYNAMODB_ENDPOINT: refused })).get("org", "ac_1")).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it("S3", async () => {
    await expect(archives(configWith({ S3_ENDPOINT: refused })).open("org", "pr_1", "json")).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it("Step Functions", async () => {
    await expect(workflowEngine(configWith({ SFN_ENDPOINT: refused })).start("execution", { org: "o" } as never)).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it("KMS, at the endpoint the SDK's own AWS_ENDPOINT_URL_KMS names", async () => {
    vi.stubEnv("AWS_ENDPOINT_URL_KMS", refused);
    const box = secretBox(configWith({ DEPLOYMENT_MODE: "aws", KMS_KEY_ID: "alias/test" }));
    await expect(box.seal("secret", { org: "o" })).rejects.toBeInstanceOf(ServiceUnavailableError);
  });
});

describe("what a service answers", () => {
  const store = () => connectionStore(configWith({ DYNAMODB_ENDPOINT: table.endpoint }));

  it("throttling, once the SDK has retried, is service_unavailable", async () => {
    answer = { status: 400, type: "ThrottlingException" };
    const before = table.calls.length;
    await expect(store().get("org", "ac_1")).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(table.calls.length - before).toBeGreaterThan(1);
  });

  it("a request the service refuses as malformed stays what it is: a bug, not an outage", async () => {
    answer = { status: 400, type: "ValidationException" };
    await expect(store().get("org", "ac_1")).rejects.toMatchObject({ name: "ValidationException" });
  });
});
