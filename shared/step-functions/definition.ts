import { readFileSync } from "node:fs";
import type { Grant } from "../grants.ts";

/**
 * The task states of the connection workflow and the Lambda behind each: CDK makes one function
 * per entry and substitutes its ARN for `placeholder`; the local runner calls `handler` in-process.
 */
export const workflowTasks = {
  HealthCheck: {
    functionName: "HealthCheckTask",
    placeholder: "HealthCheckFunctionArn",
    handler: "functions/workflow/health-check.ts",
    grants: ["table:read", "table:write", "archives:read", "secrets:use"],
    // A browser login's check opens the signed-in page in Chromium (a cold start unpacks it first).
    runsBrowser: true,
    timeoutSeconds: 2 * 60,
  },
  ContinueAsNew: {
    functionName: "ContinueAsNewTask",
    placeholder: "ContinueAsNewFunctionArn",
    handler: "functions/workflow/continue-as-new.ts",
    grants: ["table:read", "table:write", "workflow:start", "workflow:stop"],
  },
  Reauth: {
    functionName: "ReauthTask",
    placeholder: "ReauthFunctionArn",
    handler: "functions/workflow/reauth.ts",
    grants: ["table:read", "table:write", "archives:read", "archives:write", "secrets:use"],
    // A whole browser login on its own: identifier, password and TOTP steps, each a navigation and a settle.
    runsBrowser: true,
    timeoutSeconds: 5 * 60,
  },
  LoginStep: {
    functionName: "LoginStepTask",
    placeholder: "LoginStepFunctionArn",
    handler: "functions/workflow/login-step.ts",
    grants: ["table:read", "table:write", "archives:read", "archives:write", "secrets:use"],
    runsBrowser: true,
    // Lambda's maximum: a browser flow's one invocation holds its browser until the flow ends, which
    // browser flows are made to do a minute earlier (browserFlowTimeoutSeconds).
    timeoutSeconds: 15 * 60,
  },
  AwaitInput: {
    functionName: "AwaitInputTask",
    placeholder: "AwaitInputFunctionArn",
    handler: "functions/workflow/await-input.ts",
    grants: ["table:read", "table:write", "workflow:signal"],
    waitsForTaskToken: true,
  },
  ExpireFlow: {
    functionName: "ExpireFlowTask",
    placeholder: "ExpireFlowFunctionArn",
    handler: "functions/workflow/expire-flow.ts",
    grants: ["table:read", "table:write"],
  },
} as const satisfies Record<string, WorkflowTask>;

export interface WorkflowTask {
  functionName: string;
  placeholder: string;
  handler: string;
  grants: readonly Grant[];
  /** The state is `lambda:invoke.waitForTaskToken`: it ends when the token is answered, not when the function returns. */
  waitsForTaskToken?: boolean;
  /**
   * The function runs the browser login engine: it ships `@sparticuz/chromium`, whose package holds
   * an x86_64 Chromium only, and gets the memory and disk Chromium needs (infra/constructs/service-function.ts).
   */
  runsBrowser?: boolean;
  /** The function's timeout, when the default (one minute) is not enough. */
  timeoutSeconds?: number;
}

export type WorkflowTaskState = keyof typeof workflowTasks;

export const definitionFile = new URL("./connection-workflow.asl.json", import.meta.url);

/** The ASL text exactly as CDK deploys it, `${...}` placeholders included. */
export function definitionText(): string {
  return readFileSync(definitionFile, "utf8");
}

/** The definition with every `${Name}` replaced, as Step Functions sees it after CDK's substitution. */
export function substitutedDefinition(values: Record<string, string>): Record<string, unknown> {
  const text = definitionText().replace(/\$\{(\w+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for \${${name}} in the workflow definition`);
    return value;
  });
  return JSON.parse(text) as Record<string, unknown>;
}
