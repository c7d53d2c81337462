import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { z } from "zod";
import { AppError, BadRequestError, PayloadTooLargeError, UnauthorizedError, UnsupportedMediaTypeError } from "../domain/errors.ts";
import { log } from "../log.ts";
import { services, type Services } from "../services.ts";
import { headerValue } from "./headers.ts";
import { errorResponse, type HttpResponse } from "./responses.ts";

export const maxJsonBodyBytes = 1024 * 1024;

export interface HttpRequest<Params, Query, Body> {
  org: string;
  requestId: string;
  params: Params;
  query: Query;
  body: Body;
}

interface Schemas<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  params?: P;
  query?: Q;
  body?: B;
}

/**
 * Wraps one route: validates the event into a typed request, runs the core call, and maps the
 * result or any failure to an API Gateway proxy response.
 */
export function httpHandler<
  P extends z.ZodType = z.ZodUnknown,
  Q extends z.ZodType = z.ZodUnknown,
  B extends z.ZodType = z.ZodUnknown,
>(
  schemas: Schemas<P, Q, B>,
  run: (request: HttpRequest<z.infer<P>, z.infer<Q>, z.infer<B>>, core: Services) => Promise<HttpResponse>,
): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult> {
  return async (event) => {
    const requestId = event.requestContext?.requestId ?? "unknown";
    try {
      const org = event.requestContext?.authorizer?.org as string | undefined;
      if (!org) throw new UnauthorizedError();
      const request = {
        org,
        requestId,
        params: parse(schemas.params, event.pathParameters ?? {}, "path"),
        query: parse(schemas.query, event.queryStringParameters ?? {}, "query"),
        body: schemas.body ? parse(schemas.body, jsonBody(event), "body") : undefined,
      } as HttpRequest<z.infer<P>, z.infer<Q>, z.infer<B>>;
      return withRequestId(await run(request, services()), requestId);
    } catch (error) {
      if (!(error instanceof AppError)) {
        log.error("unhandled error", { requestId, route: event.resource, error: describe(error) });
      }
      return withRequestId(errorResponse(error, requestId), requestId);
    }
  };
}

function withRequestId(response: HttpResponse, requestId: string): HttpResponse {
  return { ...response, headers: { ...response.headers, "x-request-id": requestId } };
}

function parse<T extends z.ZodType>(schema: T | undefined, input: unknown, where: "path" | "query" | "body"): z.infer<T> {
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

function jsonBody(event: APIGatewayProxyEvent): unknown {
  const raw = event.body ? (event.isBase64Encoded ? Buffer.from(event.body, "base64").toString("utf8") : event.body) : "";
  if (Buffer.byteLength(raw) > maxJsonBodyBytes) throw new PayloadTooLargeError(maxJsonBodyBytes);
  if (raw.trim() === "") return {};
  const contentType = headerValue(event.headers, "content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    throw new UnsupportedMediaTypeError(`send the body as application/json (got '${contentType || "no content type"}')`);
  }
  try {
    return JSON.parse(raw);
  } catch {
    throw new BadRequestError("request body is not valid JSON", [{ code: "body", message: "malformed JSON" }]);
  }
}

function describe(error: unknown) {
  return error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
}
