import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { pipeline } from "node:stream/promises";
import * as z from "zod/mini";
import { BadRequestError, ForbiddenError, HandoffTokenExpiredError, PayloadTooLargeError, UnauthorizedError, UnsupportedMediaTypeError } from "../domain/errors.ts";
import { AppError } from "../errors.ts";
import { errorFields, log } from "../log.ts";
import { allowedOrigins, corsHeaders, corsRoute } from "./cors.ts";
import { requestBaseUrl } from "./base-url.ts";
import { headerValue } from "./headers.ts";
import { errorResponse, type HttpResponse, type StreamingResponse } from "./responses.ts";
import { lambdaStreaming } from "./lambda-streaming.ts";

export const maxJsonBodyBytes = 1024 * 1024;

export interface HttpRequest<Params, Query, Body> {
  org: string;
  requestId: string;
  params: Params;
  query: Query;
  body: Body;
  /** The undecoded body, for routes that take binary uploads (`rawBodyLimit`). */
  raw: { contentType: string | undefined; bytes: Buffer };
  /** The request's headers, as the client sent them (read them with `headerValue`). */
  headers: APIGatewayProxyEvent["headers"];
  /** Where the client reached the API (`https://host/stage`), for links back to it. */
  baseUrl: string;
  /** Set when the caller holds a handoff token rather than an API key. */
  handoffToken?: { id: string; /** Epoch seconds. */ expiresAt: number };
}

interface Schemas<P extends z.ZodMiniType, Q extends z.ZodMiniType, B extends z.ZodMiniType> {
  params?: P;
  query?: Q;
  body?: B;
  /** Set on routes that read the body as bytes rather than JSON: the largest body they take. */
  rawBodyLimit?: number;
  /** Besides API keys, a handoff token reaches the route, for the `{id}` connection it was issued for only. */
  handoffToken?: true;
}

type Run<C, P extends z.ZodMiniType, Q extends z.ZodMiniType, B extends z.ZodMiniType, R> = (
  request: HttpRequest<z.infer<P>, z.infer<Q>, z.infer<B>>,
  core: C,
) => Promise<R>;

/** The request of a route that takes no API key: there is no caller, so no org. */
export type AnonymousRequest<Params, Query, Body> = Omit<HttpRequest<Params, Query, Body>, "org">;

type AnonymousRun<C, P extends z.ZodMiniType, Q extends z.ZodMiniType, B extends z.ZodMiniType> = (
  request: AnonymousRequest<z.infer<P>, z.infer<Q>, z.infer<B>>,
  core: C,
) => Promise<HttpResponse>;

/** The authorizer's answer, as it reaches a handler (API Gateway hands context values over as strings). */
interface AuthorizerContext {
  org?: string;
  /** Set for a handoff token: the one connection it reaches. */
  connection_scope?: string;
  /** Epoch seconds; API Gateway may serve a cached authorizer answer after the token itself expired. */
  connection_scope_expires_at?: string | number;
  /** The handoff token's id. */
  connection_scope_token?: string;
}

/**
 * Wraps one route: validates the event into a typed request, runs the core call, and maps the
 * result or any failure to an API Gateway proxy response. `core` is the route's factory from
 * shared/composition (built once per process, on the first request), so the route's bundle holds
 * only the clients that core needs.
 */
export function httpHandler<
  C,
  P extends z.ZodMiniType = z.ZodMiniUnknown,
  Q extends z.ZodMiniType = z.ZodMiniUnknown,
  B extends z.ZodMiniType = z.ZodMiniUnknown,
>(core: () => C, schemas: Schemas<P, Q, B>, run: Run<C, P, Q, B, HttpResponse>): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult> {
  return (event) => respond(event, core, schemas, run, (event) => authorizedOrg(event, schemas.handoffToken === true));
}

/**
 * The same for a route the route table marks `auth: "none"` (no authorizer runs): the handler gets
 * no org and must check the credential its request carries itself. `everyAnswer` names headers
 * that every answer of the route carries, its errors included (a page's security headers).
 */
export function anonymousHttpHandler<
  C,
  P extends z.ZodMiniType = z.ZodMiniUnknown,
  Q extends z.ZodMiniType = z.ZodMiniUnknown,
  B extends z.ZodMiniType = z.ZodMiniUnknown,
>(
  core: () => C,
  schemas: Schemas<P, Q, B>,
  run: AnonymousRun<C, P, Q, B>,
  options: { everyAnswer?: () => Record<string, string> } = {},
): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult> {
  const { everyAnswer } = options;
  return async (event) => {
    const response = await respond(event, core, schemas, run, () => undefined);
    return everyAnswer ? { ...response, headers: { ...response.headers, ...everyAnswer() } } : response;
  };
}

/**
 * The same for a route whose answer is streamed (Lambda response streaming; the local gateway
 * provides the same `awslambda` API), so a large download never sits whole in memory.
 */
export function streamingHttpHandler<
  C,
  P extends z.ZodMiniType = z.ZodMiniUnknown,
  Q extends z.ZodMiniType = z.ZodMiniUnknown,
  B extends z.ZodMiniType = z.ZodMiniUnknown,
>(core: () => C, schemas: Schemas<P, Q, B>, run: Run<C, P, Q, B, HttpResponse | StreamingResponse>): unknown {
  const awslambda = lambdaStreaming();
  return awslambda.streamifyResponse(async (event, responseStream) => {
    const result = await respond(event, core, schemas, run, (event) => authorizedOrg(event, schemas.handoffToken === true));
    const output = awslambda.HttpResponseStream.from(responseStream, { statusCode: result.statusCode, headers: result.headers });
    if ("stream" in result) {
      const { stream } = result;
      await (typeof stream === "function" ? stream(output) : pipeline(stream, output)).catch(ignoreHangUp);
    } else {
      output.end(result.body);
    }
  });
}

/** A client that leaves mid-stream (closing an event stream, cancelling a download) is no failure. */
function ignoreHangUp(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ERR_STREAM_PREMATURE_CLOSE") throw error;
}

async function respond<C, P extends z.ZodMiniType, Q extends z.ZodMiniType, B extends z.ZodMiniType, R extends HttpResponse | StreamingResponse>(
  event: APIGatewayProxyEvent,
  core: () => C,
  schemas: Schemas<P, Q, B>,
  run: Run<C, P, Q, B, R>,
  caller: (event: APIGatewayProxyEvent) => string | undefined,
): Promise<R | HttpResponse> {
  const requestId = event.requestContext?.requestId ?? "unknown";
  try {
    const decoded = { ...event, pathParameters: decodedPathParameters(event) };
    const org = caller(decoded);
    const raw = { contentType: headerValue(event.headers, "content-type"), bytes: rawBody(event) };
    const limit = schemas.rawBodyLimit ?? maxJsonBodyBytes;
    if (raw.bytes.length > limit) throw new PayloadTooLargeError(limit);
    const handoffToken = org === undefined ? undefined : handoffTokenOf(decoded);
    const request = {
      ...(org === undefined ? {} : { org }),
      ...(handoffToken ? { handoffToken } : {}),
      requestId,
      raw,
      headers: event.headers ?? {},
      // Read by the login route alone: worked out only when read.
      get baseUrl() {
        return requestBaseUrl(event);
      },
      params: parse(schemas.params, decoded.pathParameters ?? {}, "path"),
      query: parse(schemas.query, event.queryStringParameters ?? {}, "query"),
      body: schemas.body ? parse(schemas.body, jsonBody(raw), "body") : undefined,
    } as HttpRequest<z.infer<P>, z.infer<Q>, z.infer<B>>;
    return withCors(event, withRequestId(await run(request, core()), requestId));
  } catch (error) {
    if (!(error instanceof AppError)) {
      log.error("unhandled error", { requestId, route: event.resource, error: errorFields(error) });
    }
    return withCors(event, withRequestId(errorResponse(error, requestId), requestId));
  }
}

/**
 * The org the authorizer resolved. A handoff token passes only on the routes whose handler opens
 * to it, and only for its own connection.
 */
function authorizedOrg(event: APIGatewayProxyEvent, opensToHandoffToken: boolean): string {
  const context = (event.requestContext?.authorizer ?? {}) as AuthorizerContext;
  if (!context.org) throw new UnauthorizedError();
  if (context.connection_scope === undefined) return context.org;
  if (!(Number(context.connection_scope_expires_at) > Date.now() / 1000)) {
    throw new HandoffTokenExpiredError();
  }
  if (!opensToHandoffToken || event.pathParameters?.id !== context.connection_scope) {
    throw new ForbiddenError("a handoff token reaches only get, submit and events of the connection it was issued for; use an API key");
  }
  return context.org;
}

/** The handoff token of a request `authorizedOrg` let through; undefined for an API key. */
function handoffTokenOf(event: APIGatewayProxyEvent): HttpRequest<unknown, unknown, unknown>["handoffToken"] {
  const context = (event.requestContext?.authorizer ?? {}) as AuthorizerContext;
  if (context.connection_scope === undefined) return undefined;
  return { id: String(context.connection_scope_token), expiresAt: Number(context.connection_scope_expires_at) };
}

function withRequestId<R extends HttpResponse | StreamingResponse>(response: R, requestId: string): R {
  return { ...response, headers: { ...response.headers, "x-request-id": requestId } };
}

/**
 * A `cors` route's answers, errors included, carry the CORS headers when a browser page can have
 * made the call: with a handoff token, or with no credential on an `auth: "none"` route (the
 * exchange). A call with an API key gets none, as on every API-key route: no page should hold a key.
 */
function withCors<R extends HttpResponse | StreamingResponse>(event: APIGatewayProxyEvent, response: R): R {
  const route = corsRoute(event.httpMethod, event.resource);
  const context = (event.requestContext?.authorizer ?? {}) as AuthorizerContext;
  if (!route || (route.auth !== "none" && context.connection_scope === undefined)) return response;
  return { ...response, headers: { ...response.headers, ...corsHeaders(allowedOrigins(), headerValue(event.headers, "origin")) } };
}

function parse<T extends z.ZodMiniType>(schema: T | undefined, input: unknown, where: "path" | "query" | "body"): z.infer<T> {
  if (!schema) return input as z.infer<T>;
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    code: issue.path.length ? issue.path.join(".") : where,
    message: issue.message,
  }));
  const summary = details.map((detail) => `${detail.code}: ${detail.message}`).join("; ");
  throw new BadRequestError(`invalid request ${where}: ${summary}`, details);
}

/**
 * API Gateway's REST API hands path parameters over as the client sent them, percent-escapes
 * included (the local gateway does the same), so they are decoded here, once, for both.
 */
function decodedPathParameters(event: APIGatewayProxyEvent): APIGatewayProxyEvent["pathParameters"] {
  if (!event.pathParameters) return null;
  const decoded: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.pathParameters)) {
    if (value === undefined) continue;
    try {
      decoded[name] = decodeURIComponent(value);
    } catch {
      throw new BadRequestError(`path ${event.path} holds a malformed percent-escape in '${value}'`, [
        { code: name, message: "malformed percent-escape: '%' must be followed by two hex digits that spell UTF-8" },
      ]);
    }
  }
  return decoded;
}

function rawBody(event: APIGatewayProxyEvent): Buffer {
  if (!event.body) return Buffer.alloc(0);
  return Buffer.from(event.body, event.isBase64Encoded ? "base64" : "utf8");
}

function jsonBody(raw: HttpRequest<unknown, unknown, unknown>["raw"]): unknown {
  const text = raw.bytes.toString("utf8");
  if (text.trim() === "") return {};
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(raw.contentType ?? "")) {
    throw new UnsupportedMediaTypeError(`send the body as application/json (got '${raw.contentType || "no content type"}')`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequestError("request body is not valid JSON", [{ code: "body", message: "malformed JSON" }]);
  }
}
