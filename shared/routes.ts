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
}

export const routes: readonly Route[] = [
  { name: "CreateConnection", method: "POST", path: "/auth/connections", handler: "functions/http/connections/create.ts" },
  { name: "ListConnections", method: "GET", path: "/auth/connections", handler: "functions/http/connections/list.ts" },
  { name: "GetConnection", method: "GET", path: "/auth/connections/{id}", handler: "functions/http/connections/get.ts" },
  { name: "UpdateConnection", method: "PATCH", path: "/auth/connections/{id}", handler: "functions/http/connections/update.ts" },
  { name: "DeleteConnection", method: "DELETE", path: "/auth/connections/{id}", handler: "functions/http/connections/delete.ts" },
];

/** Every route is behind this bearer-key authorizer. */
export const authorizer = { name: "Authorizer", handler: "functions/authorizer.ts" } as const;
