import { perConfig } from "../composition/config.ts";
import type { Config } from "../config.ts";
import { NotFoundError } from "../domain/errors.ts";
import { corsPaths, routes, type Route } from "../routes.ts";
import { errorResponse, type HttpResponse } from "./responses.ts";

/**
 * CORS for the routes a login UI embedded in another origin's page calls (the route table's `cors`
 * flag). The token travels in `Authorization`, never in a cookie, so no answer ever allows
 * credentials: a page of an allowed origin can make the calls its own token permits, nothing more.
 */

export type AllowedOrigins = Config["ALLOWED_ORIGINS"];

/** What a page may read of an answer beyond the CORS-safelisted headers: the request id and the retry advice. */
export const exposedHeaders = ["x-request-id", "retry-after", "x-should-retry"] as const;

/** The headers managed-auth-react and the hosted page send: the token, JSON bodies, the events stream's Accept. */
export const preflightAllowedHeaders = ["authorization", "content-type", "accept"] as const;

/** Chromium caps a cached preflight at two hours; longer would only be cut. */
export const preflightMaxAgeSeconds = 7200;

export const allowedOrigins = perConfig((config) => config.ALLOWED_ORIGINS);

/** The route the request reached (its API Gateway resource and method) when that route answers CORS. */
export function corsRoute(method: string, resource: string): Route | undefined {
  return routes.find((route) => route.cors === true && route.method === method && route.path === resource);
}

/**
 * The headers an answer of a cors route carries. `Vary: Origin` keeps a cache from handing one
 * origin's answer to another, since the allowed origin is echoed when ALLOWED_ORIGINS lists origins.
 */
export function corsHeaders(allowed: AllowedOrigins, origin: string | undefined): Record<string, string> {
  return { ...allowOrigin(allowed, origin), vary: "Origin", "access-control-expose-headers": exposedHeaders.join(", ") };
}

/**
 * The CORS headers of the gateway's own answers (refused credential, unknown route, throttling,
 * outage), on every path. In AWS these are API Gateway's gateway responses: one set for the whole
 * API, fixed at deploy time, so they cannot echo the request's Origin after checking it against a
 * list. Hence: `*` for `*`, the one origin when exactly one is listed, and no Allow-Origin when
 * several are (API Gateway cannot choose among them per request; such a page then cannot read why
 * its call failed, only that it did). The local gateway answers by the same rule.
 */
export function gatewayCorsHeaders(allowed: AllowedOrigins): Record<string, string> {
  const fixedOrigin = allowed === "*" ? "*" : allowed.length === 1 ? allowed[0] : undefined;
  return {
    ...(fixedOrigin === undefined ? {} : { "access-control-allow-origin": fixedOrigin }),
    "access-control-expose-headers": exposedHeaders.join(", "),
  };
}

/**
 * The answer to `OPTIONS` on `resource`: the methods of its cors routes and the headers they take.
 * A refused origin gets the same answer without `Access-Control-Allow-Origin`, which the browser
 * reads as a refusal.
 */
export function preflightResponse(allowed: AllowedOrigins, resource: string, origin: string | undefined, requestId: string): HttpResponse {
  const methods = corsPaths.get(resource);
  if (!methods) return errorResponse(new NotFoundError(`no route for OPTIONS ${resource}`), requestId);
  return {
    statusCode: 204,
    headers: {
      ...allowOrigin(allowed, origin),
      vary: "Origin",
      "access-control-allow-methods": methods.join(", "),
      "access-control-allow-headers": preflightAllowedHeaders.join(", "),
      "access-control-max-age": String(preflightMaxAgeSeconds),
    },
    body: "",
  };
}

function allowOrigin(allowed: AllowedOrigins, origin: string | undefined): Record<string, string> {
  if (allowed === "*") return { "access-control-allow-origin": "*" };
  return origin !== undefined && allowed.includes(origin) ? { "access-control-allow-origin": origin } : {};
}
