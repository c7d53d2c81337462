import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket, WebSocketServer, type RawData } from "ws";
import { startBrowserTaskEntry, titleOverCdp, type BrowserTaskEntry } from "../support/browser-task-entry.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";
import { startTestSite, upgradeStatus } from "../support/pools.ts";
import { taskRouter, type TaskRouterOptions } from "#shared/browsers/router/task-router.ts";
import { leaseCall } from "#shared/browsers/task/lease-call.ts";
import { log } from "#shared/log.ts";

const adminSecret = randomBytes(32).toString("base64url");
const devtoolsId = "bs_router_test";
/** ECS task ids: the browser task's entry, a stand-in task that echoes, and a task nothing answers for. */
const taskId = "0123456789abcdef0123456789abcdef";
const echoTaskId = "fedcba9876543210fedcba9876543210";
const silentTaskId = "00000000000000000000000000000000";
const unknownTaskId = "11111111111111111111111111111111";

let executables: Awaited<ReturnType<typeof loginChromiumForTests>>;
let site: Awaited<ReturnType<typeof startTestSite>>;
let entry: BrowserTaskEntry;
let echo: Awaited<ReturnType<typeof startEchoTask>>;
let silentOrigin: string;
let router: Awaited<ReturnType<typeof startRouter>>;
const lookups: string[] = [];

const listenOnLoopback = (server: Server) => new Promise<number>((listening) => server.listen(0, "127.0.0.1", () => listening((server.address() as AddressInfo).port)));
const closeServer = (server: Server) => new Promise<void>((closed) => server.close(() => closed()));

/** A stand-in for a task's proxy that sends back every message as it came, and records how its clients leave. */
async function startEchoTask() {
  const server = createServer();
  const sockets = new WebSocketServer({ server });
  const connections: { socket: WebSocket; pings: number; closed?: { code: number; reason: string } }[] = [];
  sockets.on("connection", (socket) => {
    const connection: (typeof connections)[number] = { socket, pings: 0 };
    connections.push(connection);
    socket.on("message", (data, isBinary) => socket.send(data, { binary: isBinary }));
    socket.on("ping", () => (connection.pings += 1));
    socket.on("close", (code, reason) => (connection.closed = { code, reason: reason.toString() }));
  });
  const port = await listenOnLoopback(server);
  return {
    origin: `http://127.0.0.1:${port}`,
    connections,
    async stop() {
      for (const client of sockets.clients) client.terminate();
      await closeServer(server);
    },
  };
}

/**
 * The router on 127.0.0.1, resolving the fixed task ids and recording every lookup. `stop` shuts it
 * down as its entry does: the relayed connections too, which would otherwise keep it open.
 */
async function startRouter(options: Pick<TaskRouterOptions, "pingIntervalMs"> = {}) {
  const origins: Record<string, string> = { [taskId]: entry.origin, [echoTaskId]: echo.origin, [silentTaskId]: silentOrigin };
  const shutdown = new AbortController();
  const server = taskRouter({
    async resolveTask(id) {
      lookups.push(id);
      return origins[id];
    },
    signal: shutdown.signal,
    ...options,
  });
  const port = await listenOnLoopback(server);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    stop() {
      shutdown.abort();
      return closeServer(server);
    },
  };
}

beforeAll(async () => {
  executables = await loginChromiumForTests();
  site = await startTestSite("<html><head><title>through the router</title></head><body>ok</body></html>");
  entry = await startBrowserTaskEntry({ chromium: executables.executablePath, adminSecret, devtoolsId });
  echo = await startEchoTask();
  // A port where nothing listens any more: a task that no longer answers.
  const closed = createServer();
  silentOrigin = `http://127.0.0.1:${await listenOnLoopback(closed)}`;
  await closeServer(closed);
  router = await startRouter();
});

afterAll(async () => {
  await entry?.dispose();
  await router?.stop();
  await echo?.stop();
  await site?.stop();
  await executables?.dispose();
});

afterEach(async () => {
  vi.restoreAllMocks();
  // The browser serves one client at a time: no test leaves one connected for the next.
  if (currentLease) await leaseCall(taskOrigin(), adminSecret, { end: currentLease }, "the test browser");
  currentLease = undefined;
});

/** The lease last granted, named after its token's first characters as the pool names a lease by its start. */
let currentLease: string | undefined;
const leaseIdOf = (token: string) => `lease-${token.slice(0, 8)}`;

const newToken = () => randomBytes(32).toString("base64url");
const taskOrigin = (id = taskId, routerUrl = router.url) => `${routerUrl}/browsers/${id}`;
const devtoolsUrl = (token?: string, id = taskId, routerUrl = router.url) =>
  `${taskOrigin(id, routerUrl).replace(/^http/, "ws")}/devtools/browser/${devtoolsId}${token === undefined ? "" : `?token=${token}`}`;

async function grant(token: string): Promise<void> {
  await leaseCall(taskOrigin(), adminSecret, { grant: { id: leaseIdOf(token), token, expiresAt: new Date(Date.now() + 60_000) } }, "the test browser");
  currentLease = leaseIdOf(token);
}

function openClient(url: string, options: { autoPong?: boolean } = {}): Promise<WebSocket> {
  return new Promise((opened, failed) => {
    const socket = new WebSocket(url, options);
    socket.once("open", () => opened(socket));
    socket.once("error", failed);
  });
}

const nextMessage = (socket: WebSocket) => new Promise<{ data: RawData; isBinary: boolean }>((received) => socket.once("message", (data, isBinary) => received({ data, isBinary })));
const nextClose = (socket: WebSocket) =>
  new Promise<{ code: number; reason: string }>((closed) => socket.once("close", (code, reason) => closed({ code, reason: reason.toString() })));

describe("the browser-task router", () => {
  it("answers the load balancer's health check without looking up a task", async () => {
    const before = lookups.length;

    const response = await fetch(`${router.url}/health`);

    expect(response.status).toBe(200);
    expect(await response.text()).toBe("ok");
    expect(lookups).toHaveLength(before);
  });

  it("lets a lease granted through it drive the task's Chromium over CDP through it", async () => {
    const token = newToken();
    await grant(token);

    expect(await titleOverCdp(devtoolsUrl(token), site.url)).toBe("through the router");
    expect(lookups).toContain(taskId);
  });

  it("refuses a DevTools client without a token before looking up the task", async () => {
    const before = lookups.length;

    expect(await upgradeStatus(devtoolsUrl())).toBe(401);
    expect(await upgradeStatus(devtoolsUrl(""))).toBe(401);
    expect(lookups).toHaveLength(before);
  });

  it("relays the task's refusals: a wrong token, another path, a second client", async () => {
    const token = newToken();
    await grant(token);

    expect(await upgradeStatus(devtoolsUrl(newToken()))).toBe(401);
    expect(await upgradeStatus(`${taskOrigin().replace(/^http/, "ws")}/devtools/browser/another?token=${token}`)).toBe(404);
    const client = await openClient(devtoolsUrl(token));
    try {
      expect(await upgradeStatus(devtoolsUrl(token))).toBe(409);
    } finally {
      client.close();
    }
  });

  it("answers 404 for an unknown task, and for a malformed task id or another path without looking one up", async () => {
    const token = newToken();
    await grant(token);

    expect(await upgradeStatus(devtoolsUrl(token, unknownTaskId))).toBe(404);
    expect((await fetch(`${taskOrigin(unknownTaskId)}/health`, { headers: { authorization: `Bearer ${adminSecret}` } })).status).toBe(404);

    const before = lookups.length;
    for (const malformed of [taskId.toUpperCase(), taskId.slice(1), `${taskId}0`, `${taskId.slice(2)}zz`]) {
      expect(await upgradeStatus(devtoolsUrl(token, malformed)), malformed).toBe(404);
      expect((await fetch(`${taskOrigin(malformed)}/health`, { headers: { authorization: `Bearer ${adminSecret}` } })).status, malformed).toBe(404);
    }
    expect(await upgradeStatus(`ws://127.0.0.1:${router.port}/devtools/browser/${devtoolsId}?token=${token}`)).toBe(404);
    expect((await fetch(`${router.url}/browsers/${taskId}`)).status).toBe(404);
    expect(lookups).toHaveLength(before);
  });

  it("cuts the open client when the lease is ended through it", async () => {
    const token = newToken();
    await grant(token);
    const browser = await chromium.connectOverCDP(devtoolsUrl(token));

    await leaseCall(taskOrigin(), adminSecret, { end: leaseIdOf(token) }, "the test browser");

    await eventually(async () => (browser.isConnected() ? undefined : true), "the client to be cut");
    expect(await upgradeStatus(devtoolsUrl(token))).toBe(401);
  });

  it("relays the task's answers to HTTP: its DevTools routes refused, its admin calls only to the admin secret", async () => {
    const token = newToken();
    await grant(token);

    const version = await fetch(`${taskOrigin()}/json/version?token=${token}`);
    expect(version.status).toBe(401);
    expect(await version.text()).not.toMatch(/webSocketDebuggerUrl|Browser|devtools/);

    await expect(leaseCall(taskOrigin(), newToken(), { end: leaseIdOf(token) }, "the test browser")).rejects.toThrow(/HTTP 401/);
    const health = await fetch(`${taskOrigin()}/health`, { headers: { authorization: `Bearer ${adminSecret}` } });
    expect(health.status).toBe(200);
    expect(health.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(health.headers.get("cache-control")).toBe("no-store");
    expect(await health.text()).toBe("chromium is up");
    const badLease = await fetch(`${taskOrigin()}/lease`, {
      method: "PUT",
      headers: { authorization: `Bearer ${adminSecret}`, "content-type": "application/json" },
      body: JSON.stringify({ lease_id: "a lease", token_sha256: "not a digest", expires_at: "tomorrow" }),
    });
    expect(badLease.status).toBe(400);
  });

  it("refuses an admin call's body over 16 KiB without passing it on", async () => {
    const before = lookups.length;

    const response = await fetch(`${taskOrigin()}/lease`, { method: "PUT", headers: { authorization: `Bearer ${adminSecret}` }, body: "x".repeat(16 * 1024 + 1) });

    expect(response.status).toBe(413);
    expect(lookups).toHaveLength(before);
  });

  it("answers 502 when the task does not answer", async () => {
    expect(await upgradeStatus(devtoolsUrl(newToken(), silentTaskId))).toBe(502);
    expect((await fetch(`${taskOrigin(silentTaskId)}/health`, { headers: { authorization: `Bearer ${adminSecret}` } })).status).toBe(502);
  });

  it("passes text and binary messages as they are, and each side's close to the other", async () => {
    const client = await openClient(devtoolsUrl("any", echoTaskId));
    const upstream = echo.connections.at(-1)!;

    client.send("a text frame");
    const text = await nextMessage(client);
    client.send(Buffer.from([0, 1, 2, 255]));
    const binary = await nextMessage(client);

    expect([text.isBinary, text.data.toString()]).toEqual([false, "a text frame"]);
    expect([binary.isBinary, [...(binary.data as Buffer)]]).toEqual([true, [0, 1, 2, 255]]);

    const closed = nextClose(client);
    upstream.socket.close(4001, "the task leaves");
    expect(await closed).toEqual({ code: 4001, reason: "the task leaves" });

    const second = await openClient(devtoolsUrl("any", echoTaskId));
    const secondUpstream = echo.connections.at(-1)!;
    second.close(4002, "the client leaves");
    await eventually(async () => secondUpstream.closed, "the task to see the client leave");
    expect(secondUpstream.closed).toEqual({ code: 4002, reason: "the client leaves" });
  });

  it("pings both sides of a connection, and cuts both when one stops answering", async () => {
    const pinging = await startRouter({ pingIntervalMs: 50 });
    try {
      const client = await openClient(devtoolsUrl("any", echoTaskId, pinging.url));
      const upstream = echo.connections.at(-1)!;
      let clientPings = 0;
      client.on("ping", () => (clientPings += 1));
      await eventually(async () => (clientPings >= 3 && upstream.pings >= 3 ? true : undefined), "pings on both sides");
      client.send("still relayed");
      expect((await nextMessage(client)).data.toString()).toBe("still relayed");

      const silent = await openClient(devtoolsUrl("any", echoTaskId, pinging.url), { autoPong: false });
      const silentUpstream = echo.connections.at(-1)!;
      const cut = nextClose(silent);
      await eventually(async () => silentUpstream.closed, "the task's side to be cut");
      expect((await cut).code).toBe(1006);
      expect(client.readyState).toBe(WebSocket.OPEN);
      client.close();
    } finally {
      await pinging.stop();
    }
  });

  it("closes every relayed connection as going away when it shuts down", async () => {
    const stopping = await startRouter();
    const client = await openClient(devtoolsUrl("any", echoTaskId, stopping.url));
    const upstream = echo.connections.at(-1)!;
    const closed = nextClose(client);

    await stopping.stop();

    expect((await closed).code).toBe(1001);
    await eventually(async () => upstream.closed, "the task's side to be closed");
    expect(upstream.closed?.code).toBe(1001);
  });

  it("logs each request's method, path and status, never its query, a token or the admin secret", async () => {
    const logged = vi.spyOn(log, "info");
    const spied = [logged, vi.spyOn(log, "warn"), vi.spyOn(log, "error")];
    const token = newToken();
    await grant(token);

    expect(await upgradeStatus(devtoolsUrl(newToken()))).toBe(401);
    const client = await openClient(devtoolsUrl(token));
    client.close();
    await fetch(`${taskOrigin()}/json/version?token=${token}`);
    expect(await upgradeStatus(devtoolsUrl(newToken(), silentTaskId))).toBe(502);

    const lines = spied.flatMap((spy) => spy.mock.calls).map((call) => JSON.stringify(call));
    expect(lines.filter((line) => line.includes(token) || line.includes(adminSecret) || line.includes("token=") || /bearer/i.test(line))).toEqual([]);
    const path = `/browsers/${taskId}/devtools/browser/${devtoolsId}`;
    expect(logged.mock.calls).toEqual(
      expect.arrayContaining([
        ["router request", { method: "PUT", path: `/browsers/${taskId}/lease`, status: 204 }],
        ["router request", { method: "GET", path, status: 401 }],
        ["router request", { method: "GET", path, status: 101 }],
        ["router request", { method: "GET", path: `/browsers/${taskId}/json/version`, status: 401 }],
      ]),
    );
  });
});
