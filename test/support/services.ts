import { randomBytes } from "node:crypto";
import { services, type Services } from "#shared/services.ts";
import type { Connection } from "#shared/domain/connection.ts";
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

/**
 * Marks the connection logged in, with health checks on, for a test that runs the workflow's tasks
 * itself: the local execution ends at its next task, so the record names this test's execution
 * instead, whose id this returns.
 */
export async function loggedInUnderTestExecution(
  core: Awaited<ReturnType<typeof servicesOnFreshTable>>,
  org: string,
  id: string,
  changes: Partial<Connection> & { post_login_url: string },
): Promise<string> {
  const record = (await core.connectionStore.get(org, id))!;
  const executionId = `test-execution-${id}`;
  await core.connectionStore.guardedUpdate(org, id, { executionArn: record.execution_arn! }, {
    execution_arn: executionId,
    health_checks: true,
    status: "AUTHENTICATED",
    last_auth_at: new Date().toISOString(),
    ...changes,
  });
  return executionId;
}
