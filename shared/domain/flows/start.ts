import { randomBytes } from "node:crypto";
import { noSessionIfTooLarge } from "../../archive/errors.ts";
import { checkEngine } from "../check-engine.ts";
import { existingConnection, type Connection } from "../connection.ts";
import { NotFoundError } from "../errors.ts";
import { checkSavedSession, type SessionCheckDeps } from "../health-checks.ts";
import { openEvidence } from "../sealed-evidence.ts";
import { scaledMs, startFirstExecution, type FlowExecutionInput, type WorkflowEngine, type WorkflowTiming } from "../workflow.ts";
import { begun, isInProgress } from "./state.ts";
import { flowTimeoutSeconds, loginTarget } from "./step.ts";

export interface LoginRouteDeps extends SessionCheckDeps {
  workflow: WorkflowEngine;
  handoff: { issueHandoffCode(org: string, connectionId: string, expiresAt: string): Promise<string> };
  timing: Pick<WorkflowTiming, "timeScale">;
  /** `PUBLIC_BASE_URL`: where the service is reached, over the base URL each request was made to. */
  publicBaseUrl?: string;
}

export interface LoginResponse {
  id: string;
  flow_type: "LOGIN" | "REAUTH";
  hosted_url: string | null;
  flow_expires_at: string;
  handoff_code: string;
  live_view_url?: string;
}

/**
 * How long the code of a login answered at once (the saved session still works) can be exchanged:
 * there is no flow for it to expire with, yet the person sent its link must still reach the page's
 * success state and the caller's success_url. Not scaled by the local time scale: a person clicks it.
 */
export const settledLoginCodeSeconds = 10 * 60;

/**
 * The hosted login page of a connection, opened with a handoff code. Only the login answer carries
 * it: the code is single-use and kept only hashed, so the record's own `hosted_url` stays null.
 */
export function hostedLoginUrl(baseUrl: string, connectionId: string, handoffCode: string): string {
  return `${baseUrl}/login/${encodeURIComponent(connectionId)}?code=${encodeURIComponent(handoffCode)}`;
}

/** The login route: starts (or rejoins) a flow. */
export function loginRouteCore(deps: LoginRouteDeps) {
  const clock = deps.now ?? (() => new Date());

  const existing = (org: string, id: string) => existingConnection(deps.connections, org, id);

  /** `codeExpiresAt`: when the link's code stops exchanging; the flow's own expiry unless given. */
  async function respond(connection: Connection, requestBaseUrl: string, codeExpiresAt?: string): Promise<LoginResponse> {
    const expiresAt = connection.flow_expires_at ?? clock().toISOString();
    const handoffCode = await deps.handoff.issueHandoffCode(connection.org, connection.id, codeExpiresAt ?? expiresAt);
    return {
      id: connection.id,
      flow_type: connection.flow_type ?? "LOGIN",
      hosted_url: hostedLoginUrl(deps.publicBaseUrl ?? requestBaseUrl, connection.id, handoffCode),
      flow_expires_at: expiresAt,
      handoff_code: handoffCode,
    };
  }

  /** A login on a connection whose saved session still works needs no flow. */
  async function sessionStillWorks(connection: Connection): Promise<boolean> {
    const postLoginUrl = connection.post_login_url;
    if (connection.status !== "AUTHENTICATED" || !postLoginUrl || isInProgress(connection)) return false;
    const evidence = await openEvidence(deps.secrets, connection);
    // The route runs no browser, and only one can tell whether a session its checks ask the browser about still works.
    if (checkEngine(connection, evidence) === "browser") return false;
    const session = await deps.sessions.load(connection.org, connection.profile_id).catch(noSessionIfTooLarge);
    if (!session) return false;
    const asked = await checkSavedSession(deps, connection, session, async (state) => ({
      probe: await deps.engine.probe({ ...loginTarget(connection), engine: "http" }, state, postLoginUrl, evidence),
    }));
    return asked.probe.state === "logged_in";
  }

  return {
    /** `requestBaseUrl`: where the caller reached the API, the hosted page's base unless `publicBaseUrl` is set. */
    async login(org: string, id: string, requestBaseUrl: string): Promise<LoginResponse> {
      const connection = await existing(org, id);
      // A create that failed or was cut off before its workflow started left this mark; the health
      // checks it misses matter from a login on.
      if (connection.workflow_start_pending) await startFirstExecution(deps, connection);
      const now = clock();
      if (await sessionStillWorks(connection)) {
        const codeExpiresAt = new Date(now.getTime() + settledLoginCodeSeconds * 1000).toISOString();
        return respond({ ...connection, flow_expires_at: now.toISOString() }, requestBaseUrl, codeExpiresAt);
      }
      const flowId = randomBytes(6).toString("hex");
      const executionName = `${id}-login-${flowId}`;
      const flow = await deps.connections.beginFlow(
        org,
        id,
        begun({
          id: flowId,
          startedAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + scaledMs(flowTimeoutSeconds, deps.timing)).toISOString(),
          executionArn: deps.workflow.executionArn(executionName),
        }),
        now.toISOString(),
      );
      if (!flow) throw new NotFoundError(`auth connection '${id}' not found`);
      if (!flow.started) return respond(flow.connection, requestBaseUrl);
      // A flow that outlived its expiry without ending (its execution lost) must not run on.
      if (isInProgress(connection) && connection.flow_execution_arn) await deps.workflow.stop(connection.flow_execution_arn);
      const input: FlowExecutionInput = { org, connection_id: id, flow_id: flowId };
      await deps.workflow.start(executionName, input);
      // Deleted meanwhile: that delete could not stop an execution that did not exist yet.
      if ((await deps.connections.get(org, id))?.flow_id !== flowId) await deps.workflow.stop(deps.workflow.executionArn(executionName));
      return respond(flow.connection, requestBaseUrl);
    },
  };
}
