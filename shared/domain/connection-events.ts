import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { isDeepStrictEqual } from "node:util";
import { AppError, errorBody } from "../errors.ts";
import { errorFields, log } from "../log.ts";
import type { Connection, ConnectionStore } from "./connection.ts";
import { HandoffTokenExpiredError, NotFoundError, TooManyRequestsError } from "./errors.ts";
import { isInProgress, seenCanceled } from "./flows/state.ts";

/**
 * A connection's flow as a server-sent event stream: its state at once, then each change, with
 * heartbeats between, until the flow ends.
 */

export type ConnectionEventType = "managed_auth_state" | "sse_heartbeat" | "error";

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
    return lastSent && isInProgress(lastSent) ? { send: seenCanceled(lastSent), done: true } : { done: true };
  }
  const current = flowSnapshot(connection);
  // Deep equality, not JSON text: DynamoDB does not keep the key order of nested maps.
  const changed = lastSent === undefined || !isDeepStrictEqual(lastSent, current);
  const done = !isInProgress(current);
  return changed ? { send: current, done } : { done };
}

/**
 * Open streams each hold a function for up to maxFollowSeconds, so they are capped: per credential
 * on a connection (a handoff token; the org's API keys count as one), and per connection whoever
 * opened them, which leaves room for a hosted page beside the caller's own streams.
 */
export const maxStreamsPerCredential = 3;
export const maxStreamsPerConnection = 6;

/**
 * A stream's slot lapses this long after its last renewal, so a stream whose function died
 * without releasing it stops counting then.
 */
export const streamSlotLeaseMilliseconds = 60_000;
const streamSlotRenewalMilliseconds = streamSlotLeaseMilliseconds / 3;
/** Rounds of read and conditional write when other streams of the connection open at the same moment. */
const maxSlotAttempts = 2 * maxStreamsPerConnection;

/** One open stream: who opened it, and until when (epoch milliseconds) its slot holds unless renewed. */
export interface StreamSlot {
  holder: string;
  until: number;
}

/** The open streams of each connection, shared by every function instance. */
export interface StreamSlotStore {
  /** The connection's slots, with the version they were read at. */
  read(org: string, connectionId: string): Promise<{ slots: Record<string, StreamSlot>; version: number }>;
  /** Writes `slots` in place of those read at `version`; false when another write came between. */
  replace(org: string, connectionId: string, slots: Record<string, StreamSlot>, version: number): Promise<boolean>;
  /** Moves the slot's expiry on; false when the slot is gone (it lapsed and was dropped). */
  renew(org: string, connectionId: string, slotId: string, until: number): Promise<boolean>;
  /** Succeeds whether or not the slot is still there. */
  release(org: string, connectionId: string, slotId: string): Promise<void>;
}

/** Who opens a stream: `holder` names the credential; `expiresAt` (epoch seconds) is a handoff token's expiry. */
export interface StreamOpener {
  holder: string;
  expiresAt?: number;
}

/** The holder name of the org's API keys, which a handoff token's id cannot take. */
export const apiKeyHolder = "api-key";

export function streamOpener(handoffToken: { id: string; expiresAt: number } | undefined): StreamOpener {
  return handoffToken ? { holder: `token:${handoffToken.id}`, expiresAt: handoffToken.expiresAt } : { holder: apiKeyHolder };
}

/**
 * Why `opener` may not open another stream on the connection given its live slots, or undefined
 * when it may; with the seconds until the first slot in the way lapses unless its stream renews it.
 */
export function streamCapProblem(live: StreamSlot[], opener: StreamOpener, now: number): { message: string; retryAfterSeconds: number } | undefined {
  const own = live.filter((slot) => slot.holder === opener.holder);
  const blocking =
    own.length >= maxStreamsPerCredential
      ? { slots: own, message: `this credential already has ${maxStreamsPerCredential} open event streams of the connection` }
      : live.length >= maxStreamsPerConnection
        ? { slots: live, message: `the connection already has ${maxStreamsPerConnection} open event streams` }
        : undefined;
  if (!blocking) return undefined;
  const firstLapse = Math.min(...blocking.slots.map((slot) => slot.until));
  return { message: `${blocking.message}: close one first`, retryAfterSeconds: Math.max(1, Math.ceil((firstLapse - now) / 1000)) };
}

export interface ConnectionEventsOptions {
  connections: Pick<ConnectionStore, "get">;
  slots: StreamSlotStore;
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

  /** Takes a slot for a stream of `opener`, or refuses with 429 when the caps are reached. */
  async function takeSlot(org: string, id: string, opener: StreamOpener): Promise<string> {
    const slotId = randomUUID();
    for (let attempt = 0; attempt < maxSlotAttempts; attempt++) {
      const { slots, version } = await deps.slots.read(org, id);
      const at = now();
      // Lapsed slots are dropped as the next stream opens: their streams' functions are gone.
      const live = Object.fromEntries(Object.entries(slots).filter(([, slot]) => slot.until > at));
      const problem = streamCapProblem(Object.values(live), opener, at);
      if (problem) throw new TooManyRequestsError("too_many_streams", problem.message, problem.retryAfterSeconds);
      const taken = { ...live, [slotId]: { holder: opener.holder, until: at + streamSlotLeaseMilliseconds } };
      if (await deps.slots.replace(org, id, taken, version)) return slotId;
    }
    throw new TooManyRequestsError("too_many_streams", "too many event streams of the connection are opening at once: retry", 1);
  }

  async function* frames(org: string, id: string, first: Connection, requestId: string, opener: StreamOpener, slotId: string): AsyncGenerator<string> {
    const started = now();
    const endsAt = Math.min(started + maxMilliseconds, opener.expiresAt === undefined ? Infinity : opener.expiresAt * 1000);
    let nextHeartbeat = started + deps.heartbeatMilliseconds;
    let nextRenewal = started + streamSlotRenewalMilliseconds;
    let lastSent: FlowSnapshot | undefined;
    let step = nextFollowStep(undefined, first);
    try {
      for (;;) {
        if (step.send) {
          lastSent = step.send;
          yield sseFrame("managed_auth_state", lastSent, timestamp());
        }
        if (step.done) return;
        await wait(deps.pollMilliseconds);
        if (now() >= endsAt) {
          // A token's expiry ends what it opened; the hosted page exchanges a new code to follow on.
          if (now() - started < maxMilliseconds) yield sseFrame("error", { error: errorBody(new HandoffTokenExpiredError(), requestId) }, timestamp());
          return;
        }
        if (now() >= nextHeartbeat) {
          nextHeartbeat = now() + deps.heartbeatMilliseconds;
          yield sseFrame("sse_heartbeat", {}, timestamp());
        }
        try {
          if (now() >= nextRenewal) {
            // A slot that lapsed may already count for another stream: this one gives it up.
            if (!(await deps.slots.renew(org, id, slotId, now() + streamSlotLeaseMilliseconds))) return;
            nextRenewal = now() + streamSlotRenewalMilliseconds;
          }
          step = nextFollowStep(lastSent, await deps.connections.get(org, id));
        } catch (error) {
          // A service_unavailable was logged, with the AWS error, where it was raised.
          if (!(error instanceof AppError)) log.error("connection events: reading the connection failed", { requestId, connection: id, error: errorFields(error) });
          yield sseFrame("error", { error: errorBody(error, requestId) }, timestamp());
          return;
        }
      }
    } finally {
      await deps.slots.release(org, id, slotId).catch((error: unknown) => {
        // The slot lapses by itself after its lease.
        log.warn("connection events: releasing the stream's slot failed", { requestId, connection: id, error: errorFields(error) });
      });
    }
  }

  return {
    /**
     * The connection's events as SSE frames, until the flow ends, the stream's time limit, or the
     * expiry of the handoff token that opened it. An unknown connection (404) or a stream over the
     * caps (429) fails here, before anything is streamed. The stream holds its slot until it ends.
     */
    async follow(org: string, id: string, requestId: string, opener: StreamOpener): Promise<AsyncGenerator<string>> {
      const first = await deps.connections.get(org, id);
      if (!first) throw new NotFoundError(`auth connection '${id}' not found`);
      const slotId = await takeSlot(org, id, opener);
      return frames(org, id, first, requestId, opener, slotId);
    },
  };
}

export type ConnectionEventsCore = ReturnType<typeof connectionEventsCore>;
