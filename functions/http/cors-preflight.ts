import type { APIGatewayProxyEvent, APIGatewayProxyResult } from "aws-lambda";
import { allowedOrigins, preflightResponse } from "#shared/http/cors.ts";
import { headerValue } from "#shared/http/headers.ts";

/** `OPTIONS` on every path of a `cors` route (no authorizer): the browser's preflight before a cross-origin call. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  return preflightResponse(allowedOrigins(), event.resource, headerValue(event.headers, "origin"), event.requestContext?.requestId ?? "unknown");
}
