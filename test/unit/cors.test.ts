import type { APIGatewayProxyEvent } from "aws-lambda";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { loadConfig } from "#shared/config.ts";
import { ConflictError } from "#shared/domain/errors.ts";
import { corsHeaders, exposedHeaders, gatewayCorsHeaders, preflightResponse } from "#shared/http/cors.ts";
import { anonymousHttpHandler, httpHandler, streamingHttpHandler } from "#shared/http/handler.ts";
import { ok } from "#shared/http/responses.ts";
import { handler as preflight } from "../../functions/http/cors-preflight.ts";

const appOrigin = "https://app.example.com";

/** The authorizer's answers: for an API key (the org), and for a handoff token of connection ac_1. */
const apiKeyCaller = { org: "acme" };
const handoffTokenCaller = { org: "acme", connection_scope: "ac_1", connection_scope_expires_at: String(Math.floor(Date.now() / 1000) + 900) };

function event(
  httpMethod: string,
  resource: string,
  headers: Record<string, string> = { Origin: appOrigin },
  authorizer: Record<string, string> | null = handoffTokenCaller,
): APIGatewayProxyEvent {
  return {
    resource,
    path: resource.replace("{id}", "ac_1"),
    httpMethod,
    headers,
    body: null,
    isBase64Encoded: false,
    pathParameters: resource.includes("{id}") ? { id: "ac_1" } : null,
    queryStringParameters: null,
    requestContext: { requestId: "req-1", path: resource.replace("{id}", "ac_1"), authorizer },
  } as unknown as APIGatewayProxyEvent;
}

const noCore = () => ({});
const corsFields = (headers: Record<string, unknown> | undefined) =>
  Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => name.startsWith("access-control-") || name === "vary"));
const anyOrigin = { "access-control-allow-origin": "*", "access-control-expose-headers": exposedHeaders.join(", "), vary: "Origin" };

describe("ALLOWED_ORIGINS", () => {
  it("is any origin by default, `*`, or a list of origins spelled as browsers send them", () => {
    expect(loadConfig({}).ALLOWED_ORIGINS).toBe("*");
    expect(loadConfig({ ALLOWED_ORIGINS: "*" }).ALLOWED_ORIGINS).toBe("*");
    expect(loadConfig({ ALLOWED_ORIGINS: "https://App.Example.com/, http://127.0.0.1:8080" }).ALLOWED_ORIGINS).toEqual([appOrigin, "http://127.0.0.1:8080"]);
  });

  it.each(["https://app.example.com/login", "ftp://app.example.com", "app.example.com", "*,https://app.example.com", "https://app.example.com?x=1"])(
    "refuses %s at startup, naming the setting",
    (value) => {
      expect(() => loadConfig({ ALLOWED_ORIGINS: value })).toThrow(/invalid configuration: ALLOWED_ORIGINS/);
    },
  );
});

describe("the CORS rule", () => {
  it("answers any origin with `*`, echoes a listed origin, and allows no other", () => {
    expect(corsHeaders("*", undefined)).toEqual(anyOrigin);
    expect(corsHeaders([appOrigin], appOrigin)["access-control-allow-origin"]).toBe(appOrigin);
    expect(corsHeaders([appOrigin], "https://evil.example")).toEqual({ "access-control-expose-headers": exposedHeaders.join(", "), vary: "Origin" });
    expect(corsHeaders([appOrigin], undefined)["access-control-allow-origin"]).toBeUndefined();
  });

  it("fixes the gateway's own answers from the setting alone: `*`, the one origin listed, or no Allow-Origin for several", () => {
    const exposed = { "access-control-expose-headers": exposedHeaders.join(", ") };

    expect(gatewayCorsHeaders("*")).toEqual({ "access-control-allow-origin": "*", ...exposed });
    expect(gatewayCorsHeaders([appOrigin])).toEqual({ "access-control-allow-origin": appOrigin, ...exposed });
    expect(gatewayCorsHeaders([appOrigin, "https://other.example.com"])).toEqual(exposed);
  });

  it("answers the preflight of a refused origin without Allow-Origin, and of a path without cors routes 404", () => {
    const refused = preflightResponse([appOrigin], "/auth/connections/{id}/submit", "https://evil.example", "req-1");
    const noCorsPath = preflightResponse("*", "/profiles", appOrigin, "req-1");

    expect(refused.statusCode).toBe(204);
    expect(refused.headers["access-control-allow-origin"]).toBeUndefined();
    expect(refused.headers["access-control-allow-methods"]).toBe("POST");
    expect(noCorsPath.statusCode).toBe(404);
    expect(JSON.parse(noCorsPath.body)).toMatchObject({ code: "not_found" });
    expect(corsFields(noCorsPath.headers)).toEqual({});
  });
});

describe("the CORS headers of the handlers' answers", () => {
  it("puts them on a cors route's answer to a handoff token, and its error answer", async () => {
    const answers = httpHandler(noCore, { handoffToken: true }, async () => ok({}));
    const fails = httpHandler(noCore, { handoffToken: true }, async () => {
      throw new ConflictError("taken", "ac_2");
    });

    expect(corsFields((await answers(event("GET", "/auth/connections/{id}"))).headers)).toEqual(anyOrigin);
    expect(corsFields((await fails(event("GET", "/auth/connections/{id}"))).headers)).toEqual(anyOrigin);
  });

  it("puts them on the anonymous exchange's answers", async () => {
    const exchange = anonymousHttpHandler(noCore, {}, async () => ok({ jwt: "t" }));

    expect(corsFields((await exchange(event("POST", "/auth/connections/{id}/exchange", {}, null))).headers)).toEqual(anyOrigin);
  });

  it("puts none on a cors route's answer to an API key, Origin sent or not", async () => {
    const answers = httpHandler(noCore, { handoffToken: true }, async () => ok({}));

    const withKey = await answers(event("GET", "/auth/connections/{id}", { Origin: appOrigin }, apiKeyCaller));

    expect(withKey.statusCode).toBe(200);
    expect(corsFields(withKey.headers)).toEqual({});
  });

  it("puts none on the answers of an API-key route, nor of a method of a cors path that is not a cors route", async () => {
    const answers = httpHandler(noCore, {}, async () => ok({}));

    for (const [method, resource] of [["GET", "/profiles"], ["POST", "/auth/connections"], ["DELETE", "/auth/connections/{id}"]] as const) {
      expect(corsFields((await answers(event(method, resource, { Origin: appOrigin }, apiKeyCaller))).headers), `${method} ${resource}`).toEqual({});
    }
  });

  it("puts them on the head of a streamed answer (the events stream)", async () => {
    const follow = streamingHttpHandler(noCore, { handoffToken: true }, async () => ({ statusCode: 200, headers: { "content-type": "text/event-stream" }, stream: (output) => new Promise<void>((done) => output.end("event: x\n\n", done)) })) as (
      event: APIGatewayProxyEvent,
      stream: PassThrough,
    ) => Promise<void>;
    let head: Record<string, string> | undefined;
    const stream = Object.assign(new PassThrough(), { writeHead: (_status: number, headers: Record<string, string>) => (head = headers) });
    stream.resume();

    await follow(event("GET", "/auth/connections/{id}/events"), stream);

    expect(corsFields(head)).toEqual(anyOrigin);
  });
});

describe("the preflight handler", () => {
  it("answers OPTIONS on a cors path 204 with the path's methods, the allowed headers and how long to keep it", async () => {
    const response = await preflight(event("OPTIONS", "/auth/connections/{id}/exchange"));

    expect(response.statusCode).toBe(204);
    expect(response.body).toBe("");
    expect(response.headers).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "POST",
      "access-control-allow-headers": "authorization, content-type, accept",
      "access-control-max-age": "7200",
      vary: "Origin",
    });
    expect(response.headers?.["access-control-allow-credentials"]).toBeUndefined();
  });
});
