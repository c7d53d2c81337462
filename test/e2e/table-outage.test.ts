import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, inject, it } from "vitest";
import { generateApiKey } from "#shared/domain/api-keys.ts";
import { startDynamoDbLocal, type DynamoDbLocal } from "../../infra/local/dynamodb-local.ts";
import { startLocalStack, type LocalStack } from "../../infra/local/stack.ts";
import { rawAccess } from "../support/raw-requests.ts";
import { eventually } from "../support/poll.ts";

let dataDir: string;
let dynamo: DynamoDbLocal;
let port: number;
let stack: LocalStack;
let connectionId: string;
let access: ReturnType<typeof rawAccess>;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "acs-outage-"));
  dynamo = await startDynamoDbLocal({ dataDir });
  port = Number(new URL(dynamo.endpoint).port);
  stack = await startLocalStack({ port: 0, dynamoEndpoint: dynamo.endpoint, s3Endpoint: inject("s3Endpoint"), bucketName: `outage-${port}` });
  access = rawAccess(stack);
  const created = await access.send("POST", "/auth/connections", { json: { domain: "outage.example", profile_name: "outage" } });
  expect(created.status).toBe(201);
  connectionId = ((await created.json()) as { id: string }).id;
});

afterAll(async () => {
  await stack?.stop();
  await dynamo?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const read = () => access.send("GET", `/auth/connections/${connectionId}`);

it("answers 503 that may be retried while the table's stand-in is down, and recovers without a restart", async () => {
  expect((await read()).status).toBe(200);

  // Requests in flight while the database dies, then requests while it stays down.
  const during = [read(), read(), read()];
  await dynamo.stop("SIGKILL");
  const answers = [...(await Promise.all(during)), await read(), await read()];
  const outageAnswers = answers.filter((answer) => answer.status !== 200);
  expect(outageAnswers.length).toBeGreaterThanOrEqual(2);
  for (const answer of outageAnswers) {
    expect(answer.status).toBe(503);
    expect(answer.headers.get("x-should-retry")).toBe("true");
    expect(answer.headers.get("retry-after")).toBe("1");
    const body = (await answer.json()) as { code: string; message: string };
    expect(body.code).toBe("service_unavailable");
    expect(body.message).toMatch(/retry/);
    expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|at .*\.ts|127\.0\.0\.1/);
  }
  // A key the authorizer has not seen cannot be looked up: that is the outage's 503, not a 401.
  const unseenKey = await access.send("GET", "/auth/connections", { auth: `Bearer ${generateApiKey()}` });
  expect(unseenKey.status).toBe(503);
  expect(unseenKey.headers.get("x-should-retry")).toBe("true");
  // A write fails the same way and changes nothing.
  const update = await access.send("PATCH", `/auth/connections/${connectionId}`, { json: { health_check_interval: 600 } });
  expect(update.status).toBe(503);

  dynamo = await startDynamoDbLocal({ dataDir, port });
  await eventually(async () => ((await read()).status === 200 ? true : undefined), "the table to answer again", 60);
  const record = (await (await read()).json()) as { id: string; health_check_interval: number };
  expect(record.id).toBe(connectionId);
  expect(record.health_check_interval).not.toBe(600);
});
