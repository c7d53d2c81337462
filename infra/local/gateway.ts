import type { APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent } from "aws-lambda";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { BadRequestError, dependencyOutageMessage, ForbiddenError, NotFoundError, PayloadTooLargeError, ServiceUnavailableError, UnauthorizedError } from "#shared/domain/errors.ts";
import { AppError } from "#shared/errors.ts";
import { allowedOrigins, gatewayCorsHeaders } from "#shared/http/cors.ts";
import { maxJsonBodyBytes } from "#shared/http/handler.ts";
import { errorResponse } from "#shared/http/responses.ts";
import { errorFields, log } from "#shared/log.ts";
import { authorizer, binaryMediaTypes, corsPaths, corsPreflight, routes, type Route } from "#shared/routes.ts";

type ProxyHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
type StreamingHandler = (event: APIGatewayProxyEvent, responseStream: ServerResponse) => Promise<void>;
type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEvent) => Promise<{ context?: Record<string, unknown> | null }>;

interface MountedRoute {
  route: Route;
  pattern: RegExp;
  handler: ProxyHandler | StreamingHandler;
}

const repoRoot = resolve(import.meta.dirname, "../..");

async function loadHandler<T>(file: string): Promise<T> {
  const module = (await import(pathToFileURL(resolve(repoRoot, file)).href)) as { handler: T };
  return module.handler;
}

/** `/auth/connections/{id}` -> a regex with one named group per path parameter. */
function pathPattern(path: string): RegExp {
  const source = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, "(?<$1>[^/]+)");
  return new RegExp(`^${source}/?$`);
}

/**
 * Plays API Gateway for the local runtime: each HTTP request becomes a REST API proxy event, goes
 * through the same authorizer and handler files that CDK deploys, and the result is written back.
 */
export async function startGateway(options: {
  port: number;
  host?: string;
  /** The one org served: any other org's credential is refused (a machine whose browsers are not isolated). */
  onlyOrg?: string;
}): Promise<{ url: string; server: Server }> {
  const mounted: MountedRoute[] = await Promise.all(
    routes.map(async (route) => ({ route, pattern: pathPattern(route.path), handler: await loadHandler<MountedRoute["handler"]>(route.handler) })),
  );
  const authorize = await loadHandler<AuthorizerHandler>(authorizer.handler);
  const preflight = await loadHandler<ProxyHandler>(corsPreflight.handler);
  const corsPathPatterns = [...corsPaths.keys()].map((path) => ({ path, pattern: pathPattern(path) }));

  function matchRoute(method: string, path: string): { entry: MountedRoute; found: RegExpExecArray } | undefined {
    for (const entry of mounted) {
      if (entry.route.method !== method) continue;
      const found = entry.pattern.exec(path);
      if (found) return { entry, found };
    }
    return undefined;
  }

  const server = createServer((request, response) => {
    const requestId = randomUUID();
    const started = performance.now();
    response.setHeader("x-request-id", requestId);
    serve(request, response, requestId)
      .then((result) => {
        if (result) send(response, result);
      })
      .catch((error: unknown) => {
        // An AppError (the authorizer's outage) was logged where it was raised, with its cause.
        if (!(error instanceof AppError)) log.error("gateway failure", { requestId, error: error instanceof Error ? error.message : String(error) });
        // Once a streamed answer has begun its status is sent: all that is left is to cut it short.
        if (response.headersSent) response.destroy();
        else send(response, gatewayError(error, requestId));
      })
      .finally(() => {
        // The path alone: the query may hold a handoff code (the hosted page's link).
        const path = requestUrl(request)?.pathname;
        log.debug("request", { requestId, method: request.method, path, status: response.statusCode, ms: performance.now() - started });
      });
  });

  /** Answers with a proxy result to write, or undefined when a streaming handler wrote it. */
  async function serve(request: IncomingMessage, response: ServerResponse, requestId: string): Promise<APIGatewayProxyResult | undefined> {
    const url = requestUrl(request);
    if (!url) {
      await drain(request);
      return gatewayError(new BadRequestError("the request target is not a valid URL path"), requestId);
    }
    const method = request.method ?? "GET";
    const corsPath = corsPathPatterns.find(({ pattern }) => pattern.test(url.pathname));
    if (method === "OPTIONS" && corsPath) {
      await drain(request);
      return preflight({
        resource: corsPath.path,
        path: url.pathname,
        httpMethod: method,
        headers: singleValueHeaders(request),
        requestContext: { requestId, stage: "local", httpMethod: method, path: url.pathname, authorizer: null },
      } as unknown as APIGatewayProxyEvent);
    }
    const match = matchRoute(method, url.pathname);
    if (!match) {
      await drain(request);
      return gatewayError(new NotFoundError(`no route for ${method} ${url.pathname}`), requestId);
    }
    // As API Gateway sets it: how the client reached the gateway, which serves plain HTTP.
    const headers: Record<string, string> = { ...singleValueHeaders(request), "x-forwarded-proto": "http" };
    const unauthenticated = match.entry.route.auth === "none";
    const authorizerContext = unauthenticated ? null : await authorizerAnswer(method, url.pathname, match.entry.route, headers);
    if (!unauthenticated && !authorizerContext) {
      await drain(request);
      return gatewayError(new UnauthorizedError(), requestId);
    }
    if (options.onlyOrg !== undefined && authorizerContext && authorizerContext.org !== options.onlyOrg) {
      await drain(request);
      return gatewayError(new ForbiddenError(`this service serves the org '${options.onlyOrg}' alone: its pooled browsers are not isolated from one another (docs/security.md)`), requestId);
    }
    const limit = match.entry.route.maxBodyBytes ?? maxJsonBodyBytes;
    const body = await readBody(request, limit);
    if (!body) return gatewayError(new PayloadTooLargeError(limit), requestId);
    const mediaType = (headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    const binary = binaryMediaTypes.some((type) => type === mediaType);
    // Undecoded, as API Gateway's REST API hands them over: the shared handler decodes them.
    const pathParameters = { ...match.found.groups };
    const query = [...url.searchParams.keys()];
    const event = {
      resource: match.entry.route.path,
      path: url.pathname,
      httpMethod: method,
      headers,
      multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
      queryStringParameters: query.length ? Object.fromEntries(url.searchParams) : null,
      multiValueQueryStringParameters: query.length ? Object.fromEntries(query.map((name) => [name, url.searchParams.getAll(name)])) : null,
      pathParameters: Object.keys(pathParameters).length ? pathParameters : null,
      stageVariables: null,
      body: body.length ? body.toString(binary ? "base64" : "utf8") : null,
      isBase64Encoded: binary,
      // As in API Gateway, a route without authorization carries no authorizer context.
      requestContext: { requestId, stage: "local", httpMethod: method, path: url.pathname, domainName: headers.host, authorizer: authorizerContext },
    } as unknown as APIGatewayProxyEvent;
    if (match.entry.route.streaming) {
      await (match.entry.handler as StreamingHandler)(event, response);
      return undefined;
    }
    return (match.entry.handler as ProxyHandler)(event);
  }

  /**
   * The gateway's own error answers, with the CORS headers API Gateway's gateway responses carry:
   * the same on every path, fixed by ALLOWED_ORIGINS, so an embedded login UI can read why its call
   * failed.
   */
  function gatewayError(error: unknown, requestId: string): APIGatewayProxyResult {
    const answer = errorResponse(error, requestId);
    return { ...answer, headers: { ...answer.headers, ...gatewayCorsHeaders(allowedOrigins()) } };
  }

  /** The authorizer's context for the request, or null when it refused it. */
  async function authorizerAnswer(method: string, path: string, route: Route, headers: Record<string, string>) {
    const authorizerEvent = {
      type: "REQUEST",
      methodArn: `arn:aws:execute-api:local:000000000000:local/local/${method}${path}`,
      resource: route.path,
      path,
      httpMethod: method,
      headers,
    } as unknown as APIGatewayRequestAuthorizerEvent;
    try {
      return (await authorize(authorizerEvent)).context ?? null;
    } catch (error) {
      // API Gateway's reading of an authorizer's answer: this message alone refuses the credential.
      if (error instanceof Error && error.message === "Unauthorized") return null;
      log.warn("authorizer failed", { error: errorFields(error) });
      throw new ServiceUnavailableError(dependencyOutageMessage, { cause: error });
    }
  }

  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(options.port, options.host ?? "127.0.0.1", () => done());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  return { url: `http://127.0.0.1:${port}`, server };
}

/** The request's URL, or undefined when its target does not parse as one. */
function requestUrl(request: IncomingMessage): URL | undefined {
  return URL.parse(request.url ?? "/", "http://gateway.local") ?? undefined;
}

function singleValueHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

/** Reads at most `limit` bytes; undefined when the body is larger (the rest is read and dropped). */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = Number(request.headers["content-length"] ?? 0) > limit ? limit + 1 : 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    request.once("end", () => done(size > limit ? undefined : Buffer.concat(chunks)));
    request.once("error", fail);
  });
}

async function drain(request: IncomingMessage): Promise<void> {
  request.resume();
  if (!request.readableEnded) await new Promise((done) => request.once("end", done).once("error", done));
}

function send(response: ServerResponse, result: APIGatewayProxyResult): void {
  const body = result.isBase64Encoded ? Buffer.from(result.body, "base64") : Buffer.from(result.body ?? "");
  response.writeHead(result.statusCode, {
    ...(result.headers as Record<string, string> | undefined),
    "content-length": String(body.length),
  });
  response.end(body);
}
