import type Kernel from "@onkernel/sdk";
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handler as loginHandler } from "../../functions/http/connections/login.ts";
import { localOrg } from "../../infra/local/stack.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
let connections = 0;

beforeAll(async () => {
  stack = await startTestStack();
  client = officialClient(stack);
});

afterAll(async () => {
  await stack?.stop();
});

/** A connection whose login flow ends at once: nothing listens on port 9 of this machine. */
async function connection(): Promise<string> {
  const created = await client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: `hosted-url-${++connections}`,
    login_url: "http://127.0.0.1:9/login",
    health_checks: false,
  });
  return created.id;
}

/** The login route's event as API Gateway hands it over for the stage `v1` of a REST API. */
function stageEvent(id: string): APIGatewayProxyEvent {
  const path = `/auth/connections/${id}/login`;
  return {
    resource: "/auth/connections/{id}/login",
    path,
    httpMethod: "POST",
    headers: { Host: "abc123.execute-api.eu-west-1.amazonaws.com", "X-Forwarded-Proto": "https" },
    pathParameters: { id },
    queryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: "req-stage", stage: "v1", path: `/v1${path}`, domainName: "abc123.execute-api.eu-west-1.amazonaws.com", authorizer: { org: localOrg } },
  } as unknown as APIGatewayProxyEvent;
}

const answerOf = (result: APIGatewayProxyResult) => JSON.parse(result.body) as { hosted_url: string; handoff_code: string };

describe("hosted_url in the login answer", () => {
  it("locally: the gateway's own URL, the connection's page and its handoff code", async () => {
    const id = await connection();

    const login = await client.auth.connections.login(id);

    expect(login.hosted_url).toBe(`${stack.url}/login/${id}?code=${encodeURIComponent(login.handoff_code ?? "")}`);
    const page = await fetch(login.hosted_url ?? "");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const connectionNow = await client.auth.connections.retrieve(id);
    expect(connectionNow.hosted_url).toBeNull();
    await client.auth.connections.delete(id);
  });

  it("behind API Gateway: https, the request's host and the stage", async () => {
    const id = await connection();

    const answer = answerOf(await loginHandler(stageEvent(id)));

    expect(answer.hosted_url).toBe(`https://abc123.execute-api.eu-west-1.amazonaws.com/v1/login/${id}?code=${encodeURIComponent(answer.handoff_code)}`);
    await client.auth.connections.delete(id);
  });

  it("with PUBLIC_BASE_URL: that base, whatever the request's host", async () => {
    const id = await connection();
    const environment = { ...process.env, PUBLIC_BASE_URL: "https://auth.example.com/login-service/", LOG_LEVEL: "error" };

    const { stdout } = await promisify(execFile)(process.execPath, ["test/support/invoke-handler.ts", resolve("functions/http/connections/login.ts"), JSON.stringify(stageEvent(id))], {
      env: environment,
    });
    const answer = answerOf((JSON.parse(stdout) as { answer: APIGatewayProxyResult }).answer);

    expect(answer.hosted_url).toBe(`https://auth.example.com/login-service/login/${id}?code=${encodeURIComponent(answer.handoff_code)}`);
    await client.auth.connections.delete(id);
  });
});
