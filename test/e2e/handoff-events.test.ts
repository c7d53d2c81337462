import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import Kernel, { NotFoundError, PermissionDeniedError } from "@onkernel/sdk";
import type { ConnectionFollowResponse } from "@onkernel/sdk/resources/auth/connections";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handoff } from "#shared/composition/handoff.ts";
import { secretBox } from "#shared/composition/secrets.ts";
import { handoffStore } from "#shared/composition/table.ts";
import { maxStreamsPerCredential } from "#shared/domain/connection-events.ts";
import { handoffCore, handoffSigningKey } from "#shared/domain/handoff.ts";
import type { Connection } from "#shared/domain/connection.ts";
import { services } from "#shared/services.ts";
import { keys } from "#shared/store/keys.ts";
import { localOrg } from "../../infra/local/stack.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

// Read when the stack's handlers first build their configuration, after this line.
process.env.SSE_HEARTBEAT_SECONDS = "1";

let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;

beforeAll(async () => {
  stack = await startTestStack();
  client = officialClient(stack);
});

afterAll(async () => {
  await stack?.stop();
});

let connectionCount = 0;
async function aConnection() {
  connectionCount++;
  return client.auth.connections.create({ domain: `events${connectionCount}.example.com`, profile_name: "events", health_checks: false });
}

/**
 * Writes flow fields straight onto the record. It stands in for the login flow engine (tested with
 * the login routes), so these tests see exactly the transitions they script.
 */
async function setFlow(id: string, flow: Partial<Connection>): Promise<void> {
  const entries = Object.entries(flow);
  await services().db.send(
    new UpdateCommand({
      TableName: stack.tableName,
      Key: keys.connection(localOrg, id),
      UpdateExpression: `SET ${entries.map((_, index) => `#f${index} = :v${index}`).join(", ")}`,
      ExpressionAttributeNames: Object.fromEntries(entries.map(([name], index) => [`#f${index}`, name])),
      ExpressionAttributeValues: Object.fromEntries(entries.map(([, value], index) => [`:v${index}`, value])),
    }),
  );
}

type StateEvent = Extract<ConnectionFollowResponse, { event: "managed_auth_state" }>;

/** Reads a follow() stream one flow state at a time, skipping (and counting) heartbeats. */
function states(events: AsyncIterable<ConnectionFollowResponse>) {
  const iterator = events[Symbol.asyncIterator]();
  const seen: ConnectionFollowResponse[] = [];
  return {
    seen,
    async next(): Promise<StateEvent | undefined> {
      for (;;) {
        const result = await iterator.next();
        if (result.done) return undefined;
        seen.push(result.value);
        if (result.value.event === "managed_auth_state") return result.value;
      }
    },
    async nextEvent(): Promise<ConnectionFollowResponse | undefined> {
      const result = await iterator.next();
      if (!result.done) seen.push(result.value);
      return result.done ? undefined : result.value;
    },
    close: () => iterator.return?.(),
  };
}

const inProgress: Partial<Connection> = { flow_status: "IN_PROGRESS", flow_step: "DISCOVERING", flow_type: "LOGIN" };
const awaitingInput: Partial<Connection> = {
  flow_status: "IN_PROGRESS",
  flow_step: "AWAITING_INPUT",
  fields: [{ id: "f_email", ref: "email", type: "identifier", label: "Email", required: true }],
};

describe("following a connection's flow with the official client", () => {
  it("yields the current state, each change, and ends after SUCCESS", async () => {
    const connection = await aConnection();
    await setFlow(connection.id, inProgress);

    const stream = states(await client.auth.connections.follow(connection.id));
    const first = await stream.next();
    await setFlow(connection.id, awaitingInput);
    const second = await stream.next();
    await setFlow(connection.id, { flow_status: "SUCCESS", flow_step: "COMPLETED", post_login_url: "https://events1.example.com/home" });
    const third = await stream.next();
    const after = await stream.next();

    expect(first).toMatchObject({ event: "managed_auth_state", flow_status: "IN_PROGRESS", flow_step: "DISCOVERING", flow_type: "LOGIN" });
    expect(second).toMatchObject({ flow_status: "IN_PROGRESS", flow_step: "AWAITING_INPUT", fields: awaitingInput.fields });
    expect(third).toMatchObject({ flow_status: "SUCCESS", flow_step: "COMPLETED", post_login_url: "https://events1.example.com/home" });
    expect(after).toBeUndefined();
    for (const event of stream.seen) expect(Date.parse(event.timestamp), event.event).not.toBeNaN();
  });

  it("sends heartbeats while the flow waits, and the next change still comes through", async () => {
    const connection = await aConnection();
    await setFlow(connection.id, awaitingInput);
    const stream = states(await client.auth.connections.follow(connection.id));

    const first = await stream.nextEvent();
    const second = await stream.nextEvent();
    const third = await stream.nextEvent();
    await setFlow(connection.id, { flow_step: "SUBMITTING" });
    const change = await stream.next();
    await stream.close();

    expect(first).toMatchObject({ event: "managed_auth_state", flow_step: "AWAITING_INPUT" });
    // Heartbeats, not states, woke the reader: the record had not changed.
    expect(second).toEqual({ event: "sse_heartbeat", timestamp: expect.any(String) });
    expect(third).toEqual({ event: "sse_heartbeat", timestamp: expect.any(String) });
    expect(change).toMatchObject({ event: "managed_auth_state", flow_step: "SUBMITTING" });
  });

  it("sends the state once and ends when no flow ever started", async () => {
    const connection = await aConnection();
    const stream = states(await client.auth.connections.follow(connection.id));

    expect(await stream.next()).toMatchObject({ event: "managed_auth_state", flow_status: null, flow_step: null });
    expect(await stream.next()).toBeUndefined();
  });

  it("ends a flow in progress as CANCELED when the connection is deleted", async () => {
    const connection = await aConnection();
    await setFlow(connection.id, awaitingInput);
    const stream = states(await client.auth.connections.follow(connection.id));
    await stream.next();

    await client.auth.connections.delete(connection.id);

    expect(await stream.next()).toMatchObject({ flow_status: "CANCELED" });
    expect(await stream.next()).toBeUndefined();
  });

  it("answers an unknown connection with a plain 404", async () => {
    await expect(client.auth.connections.follow("ac_unknown")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("the hosted page's handoff", () => {
  async function exchange(id: string, code: string) {
    return fetch(`${stack.url}/auth/connections/${id}/exchange`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
  }

  it("exchanges a code without an API key, once, for a token that reaches only its own connection", async () => {
    const connection = await aConnection();
    const other = await aConnection();
    await setFlow(connection.id, awaitingInput);
    const code = await handoff().issueHandoffCode(localOrg, connection.id, new Date(Date.now() + 600_000).toISOString());

    const exchanged = await exchange(connection.id, code);
    const { jwt } = (await exchanged.json()) as { jwt: string };
    const scoped = new Kernel({ baseURL: stack.url, apiKey: jwt });
    const again = await exchange(connection.id, code);

    expect(exchanged.status).toBe(200);
    expect(jwt.split(".")).toHaveLength(3);
    expect(await scoped.auth.connections.retrieve(connection.id)).toMatchObject({ id: connection.id, flow_step: "AWAITING_INPUT" });
    const stream = states(await scoped.auth.connections.follow(connection.id));
    expect(await stream.next()).toMatchObject({ flow_status: "IN_PROGRESS", flow_step: "AWAITING_INPUT" });
    await stream.close();
    await expect(scoped.auth.connections.retrieve(other.id)).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(scoped.auth.connections.list()).rejects.toBeInstanceOf(PermissionDeniedError);
    await expect(scoped.auth.connections.update(connection.id, { auto_reauth: false })).rejects.toMatchObject({ status: 403, error: { code: "forbidden" } });
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ code: "unauthorized", message: expect.stringContaining("already used") });
    expect(JSON.stringify(await client.auth.connections.retrieve(connection.id))).not.toContain(code);
  });

  it("refuses a code presented for another connection (401) and a malformed body (400)", async () => {
    const connection = await aConnection();
    const other = await aConnection();
    const code = await handoff().issueHandoffCode(localOrg, connection.id, new Date(Date.now() + 600_000).toISOString());

    const wrongConnection = await exchange(other.id, code);
    const noCode = await exchange(connection.id, "");
    const rightConnection = await exchange(connection.id, code);

    expect(wrongConnection.status).toBe(401);
    expect(noCode.status).toBe(400);
    expect(await noCode.text()).not.toContain(code);
    expect(rightConnection.status).toBe(200);
  });

  it("refuses a forged or altered token at the authorizer", async () => {
    const connection = await aConnection();
    const code = await handoff().issueHandoffCode(localOrg, connection.id, new Date(Date.now() + 600_000).toISOString());
    const { jwt } = (await (await exchange(connection.id, code)).json()) as { jwt: string };
    const [header, payload, signature] = jwt.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
    const widened = Buffer.from(JSON.stringify({ ...claims, sub: "ac_someone_else" })).toString("base64url");

    const altered = new Kernel({ baseURL: stack.url, apiKey: `${header}.${widened}.${signature}` });

    await expect(altered.auth.connections.retrieve("ac_someone_else")).rejects.toMatchObject({ status: 401 });
  });
});

describe("the caps on a handoff token's event streams", () => {
  async function tokenFor(id: string, tokenSeconds?: number): Promise<string> {
    const code = await handoff().issueHandoffCode(localOrg, id, new Date(Date.now() + 600_000).toISOString());
    // A core of the service's own parts with a shorter token lifetime: the service's is at least a minute.
    const issuer = tokenSeconds
      ? handoffCore({ store: handoffStore(), signingKey: handoffSigningKey({ store: handoffStore(), box: async () => secretBox() }), tokenSeconds })
      : handoff();
    return (await issuer.exchange(id, code)).jwt;
  }

  function openStream(id: string, bearer: string, signal: AbortSignal): Promise<Response> {
    return fetch(`${stack.url}/auth/connections/${id}/events`, { headers: { authorization: `Bearer ${bearer}`, accept: "text/event-stream" }, signal });
  }

  it("answers the token's streams beyond its cap with 429 and Retry-After, however many open at once, while an API key may still follow", async () => {
    const connection = await aConnection();
    await setFlow(connection.id, awaitingInput);
    const jwt = await tokenFor(connection.id);
    const open = new AbortController();
    try {
      const answers = await Promise.all(Array.from({ length: maxStreamsPerCredential + 2 }, () => openStream(connection.id, jwt, open.signal)));
      const beyond = await openStream(connection.id, jwt, open.signal);
      const withKey = await openStream(connection.id, stack.apiKey, open.signal);

      const refused = [...answers, beyond].filter((answer) => answer.status !== 200);
      expect(answers.filter((answer) => answer.status === 200)).toHaveLength(maxStreamsPerCredential);
      expect(refused.map((answer) => answer.status)).toEqual([429, 429, 429]);
      for (const answer of refused) {
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(await answer.json()).toEqual({ code: "too_many_streams", message: expect.stringContaining(`${maxStreamsPerCredential} open event streams`) });
      }
      expect(withKey.status).toBe(200);
    } finally {
      open.abort();
    }
  });

  it("ends a stream, with an error event saying so, when the token that opened it expires", async () => {
    const connection = await aConnection();
    await setFlow(connection.id, awaitingInput);
    const scoped = new Kernel({ baseURL: stack.url, apiKey: await tokenFor(connection.id, 5), maxRetries: 0 });
    const stream = states(await scoped.auth.connections.follow(connection.id));

    const first = await stream.next();
    let last = await stream.nextEvent();
    while (last?.event === "sse_heartbeat") last = await stream.nextEvent();
    const after = await stream.nextEvent();

    expect(first).toMatchObject({ flow_status: "IN_PROGRESS", flow_step: "AWAITING_INPUT" });
    expect(last).toMatchObject({ event: "error", error: { code: "unauthorized", message: "handoff token expired: exchange a new handoff code" } });
    expect(after).toBeUndefined();
  });
});
