import { randomBytes } from "node:crypto";
import { services, type Services } from "#shared/services.ts";
import type { LocalStackOptions } from "../../infra/local/stack.ts";
import { startTestStack } from "./stack.ts";

/**
 * The real core and adapters, on the shared stand-ins, in a fresh table and bucket, with the local
 * Step Functions endpoint running the workflow: the local stack without going through HTTP.
 */
export async function servicesOnFreshTable(workflow?: LocalStackOptions["workflow"]) {
  const stack = await startTestStack(workflow);
  const core: Services = services();
  return { ...core, tableName: stack.tableName, stack };
}

export function uniqueOrg(): string {
  return `org-${randomBytes(4).toString("hex")}`;
}
