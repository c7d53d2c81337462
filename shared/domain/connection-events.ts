import { setTimeout as sleep } from "node:timers/promises";
import { isDeepStrictEqual } from "node:util";
import { errorFields, log } from "../log.ts";
import type { Connection, ConnectionStore } from "./connection.ts";
import { AppError, errorBody, NotFoundError } from "./errors.ts";

/**
 * A connection's flow as a server-sent event stream: its state at once, then each change, with
 * heartbeats between, until the flow ends.
 */

export type ConnectionEventType = "managed_auth_state" | "sse_heartbeat" | "error";

const terminalFlowStatuses: ReadonlySet<Connection["flow_status"]> = new Set(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"]);

/** Lambda ends a function at 15 minutes; the stream ends a minute before, cleanly. */
export const maxFollowSeconds = 14 * 60;

/**
 * The flow fields of the connection resource: what a `managed_auth_state` frame carries. Named one
 * by one, so the flow's sealed internals on the same record can never reach a frame.
 */
export function flowSnapshot(connection: Connection) {
  return {
    flow_status: connection.flow_status,
    flow_step: connection.flow_step,
    flow_type: connection.flow_type,
    flow_expires_at: connection.flow_expires_at,
    discovered_fields: connection.discovered_fields,
    fields: connection.fields,
    choices: connection.choices,
    mfa_options: connection.mfa_options,
    sign_in_options: connection.sign_in_options,
    pending_sso_buttons: connection.pending_sso_buttons,
    sso_provider: connection.sso_provider,
    external_action_message: connection.external_action_message,
    website_error: connection.website_error,
    error_code: connection.error_code,
    error_message: connection.error_message,
    post_login_url: connection.post_login_url,
    hosted_url: connection.hosted_url,
    live_view_url: connection.live_view_url,
  };
}

export type FlowSnapshot = ReturnType<typeof flowSnapshot>;

/** One SSE frame: the type on the `event:` line and in the JSON, which stays on one `data:` line. */
export function sseFrame(type: ConnectionEventType, payload: Record<string, unknown>, timestamp: string): string {
  return `event: ${type}\ndata: ${JSON.stringify({ event: type, ...payload, timestamp })}\n\n`;
}

export interface FollowStep {
  /** The state to send, when it differs from the last one sent. */
  send?: FlowSnapshot;
  /** Nothing more will come: end the stream (after `send`). */
  done: boolean;
}

/**
 * What to do after reading the connection (undefined: it is gone), given the state sent last
 * (undefined before the first frame). The stream ends after a terminal status, at once when no
 * flow ever started, and when the connection was deleted: a flow in progress ends CANCELED then.
 */
export function nextFollowStep(lastSent: FlowSnapshot | undefined, connection: Connection | undefined): FollowStep {
  if (!connection) {
    return lastSent?.flow_status === "IN_PROGRESS" ? { send: { ...lastSent, flow_status: "CANCELED" }, done: true } : { done: true };
  }
  const current = flowSnapshot(connection);
  // Deep equality, not JSON text: DynamoDB does not keep the key order of nested maps.
  const changed = lastSent === undefined || !isDeepStrictEqual(lastSent, current);
  const done = current.flow_status === null || terminalFlowStatuses.has(current.flow_status);
  return changed ? { send: current, done } : { done };
}

export interface ConnectionEventsOptions {
  connections: Pick<ConnectionStore, "get">;
  pollMilliseconds: number;
  heartbeatMilliseconds: number;
  maxMilliseconds?: number;
  now?: () => number;
  wait?: (milliseconds: number) => Promise<unknown>;
}

export function connectionEventsCore(deps: ConnectionEventsOptions) {
  const now = deps.now ?? Date.now;
  const wait = deps.wait ?? sleep;
  const maxMilliseconds = deps.maxMilliseconds ?? maxFollowSeconds * 1000;
  const timestamp = () => new Date(now()).toISOString();

  async function* frames(org: string, id: string, first: Connection, requestId: string): AsyncGenerator<string> {
    const started = now();
    let nextHeartbeat = started + deps.heartbeatMilliseconds;
    let lastSent: FlowSnapshot | undefined;
    let step = nextFollowStep(undefined, first);
    for (;;) {
      if (step.send) {
        lastSent = step.send;
        yield sseFrame("managed_auth_state", lastSent, timestamp());
      }
      if (step.done) return;
      await wait(deps.pollMilliseconds);
      if (now() - started >= maxMilliseconds) return;
      if (now() >= nextHeartbeat) {
        nextHeartbeat = now() + deps.heartbeatMilliseconds;
        yield sseFrame("sse_heartbeat", {}, timestamp());
      }
      try {
        step = nextFollowStep(lastSent, await deps.connections.get(org, id));
      } catch (error) {
        // A service_unavailable was logged, with the AWS error, where it was raised.
        if (!(error instanceof AppError)) log.error("connection events: reading the connection failed", { requestId, connection: id, error: errorFields(error) });
        yield sseFrame("error", { error: errorBody(error, requestId) }, timestamp());
        return;
      }
    }
  }

  return {
    /**
     * The connection's events as SSE frames. An unknown connection fails here, before anything is
     * streamed, so it answers a plain 404.
     */
    async follow(org: string, id: string, requestId: string): Promise<AsyncGenerator<string>> {
      const first = await deps.connections.get(org, id);
      if (!first) throw new NotFoundError(`auth connection '${id}' not found`);
      return frames(org, id, first, requestId);
    },
  };
}

export type ConnectionEventsCore = ReturnType<typeof connectionEventsCore>;
