import { describe, expect, it } from "vitest";
import {
  apiKeyHolder,
  connectionEventsCore,
  flowSnapshot,
  maxStreamsPerConnection,
  maxStreamsPerCredential,
  nextFollowStep,
  sseFrame,
  streamSlotLeaseMilliseconds,
  type StreamSlot,
  type StreamSlotStore,
} from "#shared/domain/connection-events.ts";
import type { Connection } from "#shared/domain/connection.ts";
import { NotFoundError, TooManyRequestsError } from "#shared/domain/errors.ts";
import { connectionRecord } from "../support/connection-record.ts";

const connection = connectionRecord;

const inProgress: Partial<Connection> = { flow_status: "IN_PROGRESS", flow_step: "DISCOVERING", flow_type: "LOGIN" };
const awaitingInput: Partial<Connection> = {
  ...inProgress,
  flow_step: "AWAITING_INPUT",
  fields: [{ id: "f1", ref: "username", type: "identifier", label: "Email", required: true }],
};

/** The frames a stream sent, parsed as the official client parses them (one JSON per `data:` line). */
function parseFrames(frames: string[]) {
  return frames.map((frame) => {
    const [eventLine, dataLine, ...rest] = frame.split("\n");
    expect(rest).toEqual(["", ""]);
    expect(eventLine).toMatch(/^event: /);
    return { type: eventLine!.slice("event: ".length), data: JSON.parse(dataLine!.slice("data: ".length)) as Record<string, unknown> };
  });
}

describe("SSE frames", () => {
  it("carries the type on the event line and in the one-line JSON, with a timestamp", () => {
    const frame = sseFrame("managed_auth_state", { flow_status: "IN_PROGRESS", website_error: "wrong\npassword" }, "2026-01-01T00:00:00.000Z");

    expect(frame).toBe(
      'event: managed_auth_state\ndata: {"event":"managed_auth_state","flow_status":"IN_PROGRESS","website_error":"wrong\\npassword","timestamp":"2026-01-01T00:00:00.000Z"}\n\n',
    );
  });

  it("carries the flow fields of the resource and none of the record's internals", () => {
    const snapshot = flowSnapshot(connection({ ...awaitingInput, post_login_url: "https://example.com/home", flow_engine_state: "v1.local.sealed", flow_task_token: "token" }));

    expect(snapshot).toMatchObject({ ...awaitingInput, post_login_url: "https://example.com/home", website_error: null, hosted_url: null });
    expect(JSON.stringify(snapshot)).not.toMatch(/sealed|token|execution|profile/);
  });
});

describe("change detection", () => {
  it("sends the first state, then only changes; nested key order does not count as a change", () => {
    const first = nextFollowStep(undefined, connection(awaitingInput));
    const reordered = connection({ ...awaitingInput, fields: [{ required: true, label: "Email", type: "identifier", ref: "username", id: "f1" }] });

    expect(first).toEqual({ send: flowSnapshot(connection(awaitingInput)), done: false });
    expect(nextFollowStep(first.send, reordered)).toEqual({ done: false });
    expect(nextFollowStep(first.send, connection({ ...awaitingInput, website_error: "wrong password" }))).toMatchObject({
      send: { website_error: "wrong password" },
      done: false,
    });
  });

  it.each(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"] as const)("ends after sending the terminal status %s", (status) => {
    const last = flowSnapshot(connection(awaitingInput));

    expect(nextFollowStep(last, connection({ ...awaitingInput, flow_status: status, flow_step: "COMPLETED" }))).toMatchObject({
      send: { flow_status: status },
      done: true,
    });
  });

  it("ends at once after the first state when no flow ever started", () => {
    expect(nextFollowStep(undefined, connection())).toEqual({ send: flowSnapshot(connection()), done: true });
  });

  it("ends a flow in progress as CANCELED when the connection is deleted", () => {
    const last = flowSnapshot(connection(awaitingInput));

    expect(nextFollowStep(last, undefined)).toEqual({ send: { ...last, flow_status: "CANCELED" }, done: true });
  });
});

/** The slot store's contract in memory: one versioned map per connection. */
function slotsInMemory() {
  const items = new Map<string, { slots: Record<string, StreamSlot>; version: number }>();
  const item = (org: string, id: string) => items.get(`${org}/${id}`) ?? { slots: {}, version: 0 };
  const store: StreamSlotStore = {
    async read(org, id) {
      const { slots, version } = item(org, id);
      return { slots: structuredClone(slots), version };
    },
    async replace(org, id, slots, version) {
      if (item(org, id).version !== version) return false;
      items.set(`${org}/${id}`, { slots: structuredClone(slots), version: version + 1 });
      return true;
    },
    async renew(org, id, slotId, until) {
      const current = item(org, id);
      const slot = current.slots[slotId];
      if (!slot) return false;
      items.set(`${org}/${id}`, { slots: { ...current.slots, [slotId]: { ...slot, until } }, version: current.version + 1 });
      return true;
    },
    async release(org, id, slotId) {
      const current = item(org, id);
      const { [slotId]: _released, ...rest } = current.slots;
      items.set(`${org}/${id}`, { slots: rest, version: current.version + 1 });
    },
  };
  return { store, open: (org: string, id: string) => Object.keys(item(org, id).slots).length };
}

const apiKey = { holder: apiKeyHolder };

/** A store whose record the test changes between reads, and a clock each wait moves on. */
function scripted(states: (Connection | undefined)[], options: { heartbeatMilliseconds?: number; maxMilliseconds?: number; failAt?: number } = {}) {
  let clock = Date.parse("2026-01-01T00:00:00.000Z");
  let reads = 0;
  const slots = slotsInMemory();
  const core = connectionEventsCore({
    slots: slots.store,
    connections: {
      async get() {
        if (reads === options.failAt) throw new Error("DynamoDB is down at 10.0.0.7");
        const state = states[Math.min(reads, states.length - 1)];
        reads++;
        return state;
      },
    },
    pollMilliseconds: 250,
    heartbeatMilliseconds: options.heartbeatMilliseconds ?? 60_000,
    maxMilliseconds: options.maxMilliseconds,
    now: () => clock,
    wait: async (milliseconds) => {
      clock += milliseconds;
    },
  });
  return {
    core,
    reads: () => reads,
    openSlots: () => slots.open("acme", "ac_1"),
    now: () => clock,
    advance: (milliseconds: number) => {
      clock += milliseconds;
    },
  };
}

async function collect(frames: AsyncIterable<string>) {
  const sent: string[] = [];
  for await (const frame of frames) sent.push(frame);
  return parseFrames(sent);
}

describe("following a connection", () => {
  it("sends the current state, each change, and ends after the terminal status", async () => {
    const states = [
      connection(inProgress),
      connection(inProgress),
      connection(awaitingInput),
      connection(awaitingInput),
      connection({ ...inProgress, flow_step: "SUBMITTING" }),
      connection({ ...inProgress, flow_status: "SUCCESS", flow_step: "COMPLETED" }),
    ];
    const { core } = scripted(states);

    const frames = await collect(await core.follow("acme", "ac_1", "req-1", apiKey));

    expect(frames.map((frame) => [frame.type, frame.data.flow_status, frame.data.flow_step])).toEqual([
      ["managed_auth_state", "IN_PROGRESS", "DISCOVERING"],
      ["managed_auth_state", "IN_PROGRESS", "AWAITING_INPUT"],
      ["managed_auth_state", "IN_PROGRESS", "SUBMITTING"],
      ["managed_auth_state", "SUCCESS", "COMPLETED"],
    ]);
    expect(frames.every((frame) => frame.data.event === frame.type && typeof frame.data.timestamp === "string")).toBe(true);
  });

  it("sends a heartbeat each interval while nothing changes", async () => {
    const waiting = Array.from({ length: 12 }, () => connection(awaitingInput));
    const { core } = scripted([...waiting, connection({ ...awaitingInput, flow_status: "EXPIRED" })], { heartbeatMilliseconds: 1000 });

    const frames = await collect(await core.follow("acme", "ac_1", "req-1", apiKey));

    expect(frames.map((frame) => frame.type)).toEqual([
      "managed_auth_state",
      "sse_heartbeat",
      "sse_heartbeat",
      "sse_heartbeat",
      "managed_auth_state",
    ]);
    expect(Object.keys(frames[1]!.data).sort()).toEqual(["event", "timestamp"]);
  });

  it("ends by itself at the stream's time limit", async () => {
    const { core, reads } = scripted([connection(awaitingInput)], { maxMilliseconds: 10_000 });

    const frames = await collect(await core.follow("acme", "ac_1", "req-1", apiKey));

    expect(frames).toHaveLength(1);
    expect(reads()).toBe(40);
  });

  it("sends a masked error frame and ends when the connection cannot be read", async () => {
    const { core } = scripted([connection(awaitingInput)], { failAt: 2 });

    const frames = await collect(await core.follow("acme", "ac_1", "req-9", apiKey));

    expect(frames.at(-1)).toEqual({
      type: "error",
      data: {
        event: "error",
        error: { code: "internal_error", message: "internal error; quote request id req-9 when reporting it" },
        timestamp: expect.any(String),
      },
    });
  });

  it("fails before streaming anything for an unknown connection", async () => {
    const { core } = scripted([undefined]);

    await expect(core.follow("acme", "ac_404", "req-1", apiKey)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("the caps on open streams", () => {
  const token = (id: string, expiresAt = Date.parse("2026-01-01T01:00:00.000Z") / 1000) => ({ holder: `token:${id}`, expiresAt });

  it("refuses a credential's stream beyond its cap with 429 and Retry-After, while another credential may open one", async () => {
    const { core } = scripted([connection(awaitingInput)]);
    for (let open = 0; open < maxStreamsPerCredential; open++) await core.follow("acme", "ac_1", "req-1", token("a"));

    const refused = core.follow("acme", "ac_1", "req-1", token("a"));

    await expect(refused).rejects.toBeInstanceOf(TooManyRequestsError);
    await expect(refused).rejects.toMatchObject({
      code: "too_many_streams",
      message: `this credential already has ${maxStreamsPerCredential} open event streams of the connection: close one first`,
      retryAfterSeconds: streamSlotLeaseMilliseconds / 1000,
    });
    await expect(core.follow("acme", "ac_1", "req-1", token("b"))).resolves.toBeDefined();
  });

  it("refuses a connection's stream beyond its cap whoever opens it", async () => {
    const { core, openSlots } = scripted([connection(awaitingInput)]);
    for (let open = 0; open < maxStreamsPerConnection; open++) await core.follow("acme", "ac_1", "req-1", token(`t${open}`));

    await expect(core.follow("acme", "ac_1", "req-1", apiKey)).rejects.toMatchObject({ code: "too_many_streams", message: expect.stringContaining(`${maxStreamsPerConnection} open event streams`) });
    expect(openSlots()).toBe(maxStreamsPerConnection);
  });

  it("frees a stream's slot when the stream ends", async () => {
    const { core, openSlots } = scripted([connection(awaitingInput), connection({ ...awaitingInput, flow_status: "SUCCESS" })]);
    const streams = [];
    for (let open = 0; open < maxStreamsPerCredential; open++) streams.push(await core.follow("acme", "ac_1", "req-1", apiKey));

    await collect(streams[0]!);

    expect(openSlots()).toBe(maxStreamsPerCredential - 1);
    await expect(core.follow("acme", "ac_1", "req-1", apiKey)).resolves.toBeDefined();
  });

  it("stops counting a slot its stream stopped renewing (its function died), and keeps one its stream renews", async () => {
    const waiting = scripted([connection(awaitingInput)], { maxMilliseconds: 3 * streamSlotLeaseMilliseconds });
    const renewed = await waiting.core.follow("acme", "ac_1", "req-1", apiKey);
    for (let open = 1; open < maxStreamsPerCredential; open++) await waiting.core.follow("acme", "ac_1", "req-1", apiKey);
    // The first stream runs on past the lease, renewing; the others are never read again.
    await renewed.next();
    while (waiting.now() < Date.parse("2026-01-01T00:00:00.000Z") + 2 * streamSlotLeaseMilliseconds) await renewed.next();

    const opened = [await waiting.core.follow("acme", "ac_1", "req-1", apiKey), await waiting.core.follow("acme", "ac_1", "req-1", apiKey)];

    expect(opened).toHaveLength(2);
    await expect(waiting.core.follow("acme", "ac_1", "req-1", apiKey)).rejects.toMatchObject({ code: "too_many_streams" });
  });

  it("ends a stream with an error frame when the handoff token that opened it expires", async () => {
    const { core, now, openSlots } = scripted([connection(awaitingInput)], { heartbeatMilliseconds: 60_000 });
    const expiresAt = Math.floor(now() / 1000) + 30;

    const frames = await collect(await core.follow("acme", "ac_1", "req-1", token("short", expiresAt)));

    expect(frames.map((frame) => frame.type)).toEqual(["managed_auth_state", "error"]);
    expect(frames[1]!.data.error).toEqual({ code: "unauthorized", message: "handoff token expired: exchange a new handoff code" });
    expect(now()).toBeGreaterThanOrEqual(expiresAt * 1000);
    expect(now()).toBeLessThan(expiresAt * 1000 + 1000);
    expect(openSlots()).toBe(0);
  });
});
