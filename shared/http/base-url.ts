import type { APIGatewayProxyEvent } from "aws-lambda";
import { headerValue } from "./headers.ts";

/**
 * Where the client reached the API, as `<proto>://<host><prefix>`: API Gateway sends
 * `X-Forwarded-Proto` and `Host`. Its `requestContext.path` is the path the client asked for, the
 * stage (`/v1`) or a custom domain's base path included. `event.path` cannot say where the route's
 * own path starts: on the execute-api host it leaves the stage out, but on a custom domain it keeps
 * the base path. So the prefix is what `requestContext.path` holds before as many segments as the
 * route's resource (`/login/{id}`) has. The local gateway sends the same (no prefix).
 */
export function requestBaseUrl(event: Pick<APIGatewayProxyEvent, "headers" | "path" | "resource" | "requestContext">): string {
  const forwarded = headerValue(event.headers, "x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  const proto = forwarded === "http" ? "http" : "https";
  const host = headerValue(event.headers, "host") ?? event.requestContext?.domainName ?? "localhost";
  const base = `${proto}://${host}${pathPrefix(event.requestContext?.path ?? event.path, event.resource ?? event.path)}`;
  return URL.canParse(base) ? base.replace(/\/+$/, "") : `${proto}://${event.requestContext?.domainName ?? "localhost"}`;
}

/** `requestedPath` without its last segments, one for each segment of `resource`. */
function pathPrefix(requestedPath: string, resource: string): string {
  const requested = segments(requestedPath);
  const routeSegments = segments(resource).length;
  return requested.length > routeSegments ? `/${requested.slice(0, requested.length - routeSegments).join("/")}` : "";
}

function segments(path: string): string[] {
  return path.split("/").filter((segment) => segment !== "");
}
