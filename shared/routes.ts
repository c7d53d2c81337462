import type { Grant } from "./grants.ts";
import { archiveUploadLimitBytes } from "./limits.ts";

/**
 * The route table, read by CDK (one Lambda per route) and by the local gateway (same handlers).
 * `handler` is the file, relative to the repository root, whose `handler` export serves the route.
 */
export interface Route {
  name: string;
  method: "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
  path: string;
  handler: string;
  /** Largest request body the route reads; bigger bodies answer 413 before the handler runs. */
  maxBodyBytes?: number;
  /** The handler streams its answer (Lambda response streaming). */
  streaming?: boolean;
  /** The function's timeout, when the default (29 s, or 5 minutes for a streamed answer) is not enough. */
  timeoutSeconds?: number;
  /**
   * Concurrency reserved for the function, which is also the most it runs at once: a route whose
   * answers hold a function for minutes then cannot take the account's whole Lambda concurrency.
   * A deployer may change or drop it (`RESERVED_STREAM_CONCURRENCY`, infra/stack.ts).
   */
  reservedConcurrency?: number;
  /**
   * "none": no authorizer runs and the request carries no org (the exchange, where the one-time code
   * in the body is the credential). Absent: an API key or a handoff token is required.
   */
  auth?: "none";
  /**
   * A browser page of another origin may call the route (a login UI embedded in the caller's web
   * app): its answers carry CORS headers, and OPTIONS on its path answers the preflight. Set on
   * exactly the routes a handoff token or no key reaches; the API-key routes stay without CORS.
   */
  cors?: true;
  /** What the route's function may touch; CDK grants exactly these. */
  grants: readonly Grant[];
}

/** Request and response bodies of these types travel base64-encoded through API Gateway. */
export const binaryMediaTypes = ["application/zstd", "application/x-tar", "application/octet-stream", "application/zip"] as const;

export const routes: readonly Route[] = [
  { name: "CreateConnection", method: "POST", path: "/auth/connections", handler: "functions/http/connections/create.ts", grants: ["table:read", "table:write", "workflow:start", "workflow:stop"] },
  { name: "ListConnections", method: "GET", path: "/auth/connections", handler: "functions/http/connections/list.ts", grants: ["table:read"] },
  { name: "GetConnection", method: "GET", path: "/auth/connections/{id}", handler: "functions/http/connections/get.ts", cors: true, grants: ["table:read"] },
  { name: "UpdateConnection", method: "PATCH", path: "/auth/connections/{id}", handler: "functions/http/connections/update.ts", grants: ["table:read", "table:write"] },
  { name: "DeleteConnection", method: "DELETE", path: "/auth/connections/{id}", handler: "functions/http/connections/delete.ts", grants: ["table:read", "table:write", "workflow:stop"] },
  {
    name: "ListConnectionTimeline",
    method: "GET",
    path: "/auth/connections/{id}/timeline",
    handler: "functions/http/connections/timeline.ts",
    grants: ["table:read"],
  },
  {
    name: "DownloadConnectionReplay",
    method: "GET",
    path: "/auth/connections/{id}/replays/{replay_id}",
    handler: "functions/http/connections/replay.ts",
    streaming: true,
    grants: ["table:read", "archives:read"],
  },
  {
    name: "StartConnectionLogin",
    method: "POST",
    path: "/auth/connections/{id}/login",
    handler: "functions/http/connections/login.ts",
    grants: ["table:read", "table:write", "archives:read", "secrets:use", "workflow:start", "workflow:stop"],
  },
  {
    name: "SubmitConnectionInput",
    method: "POST",
    path: "/auth/connections/{id}/submit",
    handler: "functions/http/connections/submit.ts",
    cors: true,
    grants: ["table:read", "table:write", "secrets:use", "workflow:signal"],
  },
  {
    name: "FollowConnectionEvents",
    method: "GET",
    path: "/auth/connections/{id}/events",
    handler: "functions/http/connections/events.ts",
    streaming: true,
    // Lambda's limit: the stream ends itself a minute earlier (maxFollowSeconds).
    timeoutSeconds: 15 * 60,
    reservedConcurrency: 50,
    cors: true,
    // Writes: the slot each open stream holds (connection-events.ts).
    grants: ["table:read", "table:write"],
  },
  {
    name: "ExchangeHandoffCode",
    method: "POST",
    path: "/auth/connections/{id}/exchange",
    handler: "functions/http/connections/exchange.ts",
    auth: "none",
    cors: true,
    grants: ["table:read", "table:write", "secrets:use"],
  },
  // The hosted login page and its script and style: the handoff code in the page's URL, which the
  // script exchanges, is the credential, so no authorizer runs and the functions touch nothing.
  { name: "HostedLoginPage", method: "GET", path: "/login/{id}", handler: "functions/http/hosted/page.ts", auth: "none", grants: [] },
  { name: "HostedLoginAsset", method: "GET", path: "/login-assets/{file}", handler: "functions/http/hosted/asset.ts", auth: "none", grants: [] },
  { name: "CreateProfile", method: "POST", path: "/profiles", handler: "functions/http/profiles/create.ts", grants: ["table:read", "table:write"] },
  { name: "ListProfiles", method: "GET", path: "/profiles", handler: "functions/http/profiles/list.ts", grants: ["table:read"] },
  { name: "GetProfile", method: "GET", path: "/profiles/{id_or_name}", handler: "functions/http/profiles/get.ts", grants: ["table:read"] },
  { name: "UpdateProfile", method: "PATCH", path: "/profiles/{id_or_name}", handler: "functions/http/profiles/update.ts", grants: ["table:read", "table:write"] },
  { name: "DeleteProfile", method: "DELETE", path: "/profiles/{id_or_name}", handler: "functions/http/profiles/delete.ts", grants: ["table:read", "table:write", "archives:write"] },
  {
    name: "ImportProfileArchive",
    method: "PUT",
    path: "/profiles/{id_or_name}/archive",
    handler: "functions/http/profiles/import-archive.ts",
    maxBodyBytes: archiveUploadLimitBytes,
    grants: ["table:read", "table:write", "archives:write"],
  },
  {
    name: "DownloadProfile",
    method: "GET",
    path: "/profiles/{id_or_name}/download",
    handler: "functions/http/profiles/download.ts",
    streaming: true,
    grants: ["table:read", "archives:read"],
  },
  { name: "CreateBrowserPool", method: "POST", path: "/browser_pools", handler: "functions/http/pools/create.ts", grants: ["table:read", "table:write"] },
  { name: "ListBrowserPools", method: "GET", path: "/browser_pools", handler: "functions/http/pools/list.ts", grants: ["table:read"] },
  { name: "GetBrowserPool", method: "GET", path: "/browser_pools/{id_or_name}", handler: "functions/http/pools/get.ts", grants: ["table:read"] },
  { name: "UpdateBrowserPool", method: "PATCH", path: "/browser_pools/{id_or_name}", handler: "functions/http/pools/update.ts", grants: ["table:read", "table:write", "browsers:lease"] },
  { name: "DeleteBrowserPool", method: "DELETE", path: "/browser_pools/{id_or_name}", handler: "functions/http/pools/delete.ts", grants: ["table:read", "table:write", "browsers:lease"] },
  { name: "AcquireBrowser", method: "POST", path: "/browser_pools/{id_or_name}/acquire", handler: "functions/http/pools/acquire.ts", grants: ["table:read", "table:write", "browsers:lease"] },
  { name: "ReleaseBrowser", method: "POST", path: "/browser_pools/{id_or_name}/release", handler: "functions/http/pools/release.ts", grants: ["table:read", "table:write", "browsers:lease"] },
  { name: "FlushBrowserPool", method: "POST", path: "/browser_pools/{id_or_name}/flush", handler: "functions/http/pools/flush.ts", grants: ["table:read", "table:write", "browsers:lease"] },
  { name: "CreateCredential", method: "POST", path: "/credentials", handler: "functions/http/credentials/create.ts", grants: ["table:read", "table:write", "secrets:use"] },
  { name: "ListCredentials", method: "GET", path: "/credentials", handler: "functions/http/credentials/list.ts", grants: ["table:read"] },
  { name: "GetCredential", method: "GET", path: "/credentials/{id_or_name}", handler: "functions/http/credentials/get.ts", grants: ["table:read"] },
  { name: "UpdateCredential", method: "PATCH", path: "/credentials/{id_or_name}", handler: "functions/http/credentials/update.ts", grants: ["table:read", "table:write", "secrets:use"] },
  { name: "DeleteCredential", method: "DELETE", path: "/credentials/{id_or_name}", handler: "functions/http/credentials/delete.ts", grants: ["table:read", "table:write"] },
  {
    name: "GetCredentialTotpCode",
    method: "GET",
    path: "/credentials/{id_or_name}/totp-code",
    handler: "functions/http/credentials/totp-code.ts",
    grants: ["table:read", "secrets:use"],
  },
];

/** Every route but those marked `auth: "none"` is behind this authorizer (API keys and handoff tokens). */
export const authorizer = { name: "Authorizer", handler: "functions/authorizer.ts", grants: ["table:read", "secrets:use"] } as const;

const corsRoutes = routes.filter((route) => route.cors);
/** Each path with a `cors` route, and the methods its preflight allows: those routes' methods. */
export const corsPaths: ReadonlyMap<string, readonly Route["method"][]> = new Map(
  corsRoutes.map(({ path }) => [path, corsRoutes.filter((route) => route.path === path).map((route) => route.method)]),
);

/** Answers `OPTIONS` (the CORS preflight) on every path in `corsPaths`; no authorizer runs. */
export const corsPreflight = { name: "CorsPreflight", handler: "functions/http/cors-preflight.ts", grants: [] } as const;
