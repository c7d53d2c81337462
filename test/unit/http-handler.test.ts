import type { APIGatewayProxyEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { ConflictError } from "#shared/domain/errors.ts";
import { anonymousHttpHandler, httpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";

function event(overrides: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    resource: "/things",
    path: "/things",
    httpMethod: "POST",
    headers: { "Content-Type": "application/json" },
    body: null,
    isBase64Encoded: false,
    pathParameters: null,
    queryStringParameters: null,
    requestContext: { requestId: "req-1", authorizer: { org: "acme" } },
    ...overrides,
  } as unknown as APIGatewayProxyEvent;
}

const noCore = () => ({});

describe("httpHandler", () => {
  it("hands the validated body, the caller's org and the route's core to the core call", async () => {
    const seen: unknown[] = [];
    const core = { name: "the core" };
    const handler = httpHandler(() => core, { body: z.object({ n: z.number() }) }, async (request, given) => {
      seen.push([request.org, request.body, given]);
      return ok({ done: true });
    });

    const response = await handler(event({ body: JSON.stringify({ n: 3, extra: "ignored" }) }));

    expect(response.statusCode).toBe(200);
    expect(seen).toEqual([["acme", { n: 3 }, core]]);
  });

  it("masks an unexpected failure as a 500 without its message or stack", async () => {
    const handler = httpHandler(noCore, {}, async () => {
      throw new Error("secret detail at /srv/app/core.ts:12");
    });

    const response = await handler(event());

    expect(response.statusCode).toBe(500);
    expect(JSON.parse(response.body)).toEqual({
      code: "internal_error",
      message: "internal error; quote request id req-1 when reporting it",
    });
    expect(response.headers?.["x-should-retry"]).toBeUndefined();
  });

  it("maps a conflict to 409 with existing_id and no retry", async () => {
    const handler = httpHandler(noCore, {}, async () => {
      throw new ConflictError("taken", "ac_1");
    });

    const response = await handler(event());

    expect(response.statusCode).toBe(409);
    expect(response.headers?.["x-should-retry"]).toBe("false");
    expect(JSON.parse(response.body)).toEqual({
      code: "conflict",
      message: "taken",
      details: [{ code: "existing_id", message: "ac_1" }],
      existing_id: "ac_1",
    });
  });

  it("answers 401 when no authorizer context reached the handler", async () => {
    const handler = httpHandler(noCore, {}, async () => ok({}));

    const response = await handler(event({ requestContext: { requestId: "req-2" } } as Partial<APIGatewayProxyEvent>));

    expect(response.statusCode).toBe(401);
  });

  it("reads a base64-encoded JSON body as API Gateway may send it", async () => {
    const handler = httpHandler(noCore, { body: z.object({ n: z.number() }) }, async (request) => ok(request.body));

    const response = await handler(event({ body: Buffer.from('{"n":7}').toString("base64"), isBase64Encoded: true }));

    expect(JSON.parse(response.body)).toEqual({ n: 7 });
  });

  it("decodes path parameters, which API Gateway hands over still percent-escaped", async () => {
    const handler = httpHandler(noCore, { params: z.object({ id_or_name: z.string() }) }, async (request) => ok(request.params));

    const response = await handler(event({ path: "/profiles/caf%C3%A9%2Dx", pathParameters: { id_or_name: "caf%C3%A9%2Dx" } }));

    expect(JSON.parse(response.body)).toEqual({ id_or_name: "café-x" });
  });

  it.each(["%ZZ", "%E0%A4%A", "%ff", "%"])("answers 400 naming the path to the malformed escape %s", async (segment) => {
    let ran = false;
    const handler = httpHandler(noCore, { params: z.object({ id: z.string() }) }, async () => {
      ran = true;
      return ok({});
    });

    const response = await handler(event({ path: `/auth/connections/${segment}`, pathParameters: { id: segment } }));

    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ code: "bad_request", message: expect.stringContaining(`/auth/connections/${segment}`) });
    expect(ran).toBe(false);
  });
});

describe("a request authorised by a handoff token", () => {
  const inAMinute = () => String(Math.floor(Date.now() / 1000) + 60);
  const seenOrgs: string[] = [];
  const answer = async (request: { org: string }) => {
    seenOrgs.push(request.org);
    return ok({});
  };
  const openToTokens = httpHandler(noCore, { handoffToken: true }, answer);
  const keysOnly = httpHandler(noCore, {}, answer);

  function tokenEvent(id: string | undefined, expiresAt = inAMinute()) {
    return event({
      pathParameters: id === undefined ? null : { id },
      requestContext: { requestId: "req-3", authorizer: { org: "acme", connection_scope: "ac_1", connection_scope_expires_at: expiresAt } },
    } as unknown as Partial<APIGatewayProxyEvent>);
  }

  it("reaches a route whose handler opens to it, for its own connection", async () => {
    const response = await openToTokens(tokenEvent("ac_1"));

    expect(response.statusCode).toBe(200);
    expect(seenOrgs).toEqual(["acme"]);
  });

  it.each([
    ["another connection on a route open to tokens", () => openToTokens(tokenEvent("ac_2"))],
    ["a route open to tokens without a connection id", () => openToTokens(tokenEvent(undefined))],
    ["its own connection on a route for API keys only", () => keysOnly(tokenEvent("ac_1"))],
    ["a route for API keys only without a connection id", () => keysOnly(tokenEvent(undefined))],
  ])("answers 403 forbidden for %s", async (_, send) => {
    const response = await send();

    expect(response.statusCode).toBe(403);
    expect(JSON.parse(response.body)).toMatchObject({ code: "forbidden", message: expect.stringContaining("handoff token") });
  });

  it("answers 401 once the token has expired, though API Gateway still caches the authorizer's answer", async () => {
    const response = await openToTokens(tokenEvent("ac_1", String(Math.floor(Date.now() / 1000) - 1)));

    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body).message).toContain("expired");
  });
});
