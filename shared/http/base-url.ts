import type { APIGatewayProxyEvent } from "aws-lambda";
import { headerValue } from "./headers.ts";

/**
 * Where the client reached the API, as `<proto>://<host><prefix>`: API Gateway sends
 * `X-Forwarded-Proto` and `Host`, and its `requestContext.path` carries the stage (`/v1`) or a custom
 * domain's base path before the route's own path. The local gateway sends the same (no prefix).
 */
export function requestBaseUrl(event: Pick<APIGatewayProxyEvent, "headers" | "path" | "requestContext">): string {
  const forwarded = headerValue(event.headers, "x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  const proto = forwarded === "http" ? "http" : "https";
  const host = headerValue(event.headers, "host") ?? event.requestContext?.domainName ?? "localhost";
  const fullPath = event.requestContext?.path ?? event.path;
  const prefix = fullPath.endsWith(event.path) ? fullPath.slice(0, fullPath.length - event.path.length) : "";
  const base = `${proto}://${host}${prefix}`;
  return URL.canParse(base) ? base.replace(/\/+$/, "") : `${proto}://${event.requestContext?.domainName ?? "localhost"}`;
}
