import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { authorizer, corsPaths, corsPreflight, routes, type Route } from "#shared/routes.ts";

const root = resolve(import.meta.dirname, "../..");

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(folder, entry.name)) : [relative(root, join(folder, entry.name))],
  );
}

describe("the route table", () => {
  it("names every HTTP handler file exactly once, the CORS preflight's beside the routes", () => {
    const handlerFiles = filesUnder(join(root, "functions/http")).sort();

    expect([...routes.map((route) => route.handler), corsPreflight.handler].sort()).toEqual(handlerFiles);
  });

  it("has unique names and unique method and path pairs", () => {
    expect(new Set(routes.map((route) => route.name)).size).toBe(routes.length);
    expect(new Set(routes.map((route) => `${route.method} ${route.path}`)).size).toBe(routes.length);
  });

  it("points at modules that export a handler function", async () => {
    for (const file of [...routes.map((route) => route.handler), authorizer.handler, corsPreflight.handler]) {
      const module = (await import(resolve(root, file))) as { handler?: unknown };
      expect(typeof module.handler, file).toBe("function");
    }
  });
});

/**
 * Whether the route's handler lets a handoff token through: a token for the connection in the path
 * is refused (403) before anything else by the routes that do not open to it. The path's values are
 * too long for any id, so a route that lets the token in answers 400 without reaching its core.
 */
async function opensToHandoffToken(route: Route): Promise<boolean> {
  const value = "c".repeat(65);
  const event = {
    resource: route.path,
    path: route.path.replace(/\{\w+\}/g, value),
    httpMethod: route.method,
    headers: {},
    body: null,
    isBase64Encoded: false,
    pathParameters: Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => [name, value])),
    queryStringParameters: null,
    requestContext: { requestId: "req-1", authorizer: { org: "acme", connection_scope: value, connection_scope_expires_at: Date.now() / 1000 + 60 } },
  } as unknown as APIGatewayProxyEvent;
  const { handler } = (await import(resolve(root, route.handler))) as { handler: (event: APIGatewayProxyEvent, stream?: PassThrough) => Promise<unknown> };
  if (!route.streaming) return ((await handler(event)) as APIGatewayProxyResult).statusCode !== 403;
  let statusCode: number | undefined;
  const stream = Object.assign(new PassThrough(), { writeHead: (status: number) => (statusCode = status) });
  stream.resume();
  await handler(event, stream);
  return statusCode !== 403;
}

describe("the cors routes", () => {
  it("are exactly the routes a handoff token reaches and the anonymous API route that issues it", async () => {
    const tokenRoutes: string[] = [];
    for (const route of routes.filter((candidate) => candidate.auth !== "none")) {
      if (await opensToHandoffToken(route)) tokenRoutes.push(route.name);
    }
    // The hosted page and its assets are also anonymous, but loaded by navigation from their own origin.
    const anonymousApiRoutes = routes.filter((route) => route.auth === "none" && route.path.startsWith("/auth/")).map((route) => route.name);

    expect(tokenRoutes.sort()).toEqual(["FollowConnectionEvents", "GetConnection", "SubmitConnectionInput"]);
    expect(routes.filter((route) => route.cors).map((route) => route.name).sort()).toEqual([...tokenRoutes, ...anonymousApiRoutes].sort());
  });

  it("give each of their paths a preflight allowing exactly their methods", () => {
    expect(Object.fromEntries(corsPaths)).toEqual({
      "/auth/connections/{id}": ["GET"],
      "/auth/connections/{id}/submit": ["POST"],
      "/auth/connections/{id}/events": ["GET"],
      "/auth/connections/{id}/exchange": ["POST"],
    });
  });
});
