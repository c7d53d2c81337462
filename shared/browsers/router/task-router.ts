import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import { errorFields, log } from "../../log.ts";
import { adminCallTimeoutMs } from "../task/lease-call.ts";
import { answer, refuseUpgrade } from "../task/lease-proxy.ts";

export interface TaskRouterOptions {
  /** A running browser task's origin (`http://<private ip>:<port>`), or undefined when no such browser task runs. */
  resolveTask(taskId: string): Promise<string | undefined>;
  /** Once aborted, every relayed connection is closed as going away: the signal that also closes the server. */
  signal?: AbortSignal;
  /** How often both ends of a relayed connection are pinged. */
  pingIntervalMs?: number;
}

/** An admin call's body is a few dozen bytes; anything much larger is not one. */
const maxBodyBytes = 16 * 1024;
/** A task's cache-control reaches CloudFront, in front, so that it keeps none of a task's answers. */
const relayedAnswerHeaders = ["content-type", "cache-control"];
const handshakeTimeoutMs = 10_000;
/**
 * Below the idle timeouts on the way in (CloudFront's, the load balancer's), so that a quiet lease
 * is not cut, and often enough to notice soon a peer whose network path died without a close.
 */
const defaultPingIntervalMs = 30_000;

/** A request for a task: its id, and the path and query on the task's lease proxy. */
interface TaskRoute {
  taskId: string;
  path: string;
  search: string;
}

/** `/browsers/<ECS task id>/<path on the task's lease proxy>`. */
const taskPath = /^\/browsers\/([0-9a-f]{32})(\/.*)$/;

/** The request's path and query: never logged whole, as a DevTools URL's query carries the lease token. */
const targetOf = (request: IncomingMessage) => URL.parse(request.url ?? "/", "http://router");

function taskRoute(target: URL | null): TaskRoute | undefined {
  const match = target && taskPath.exec(target.pathname);
  return match ? { taskId: match[1] as string, path: match[2] as string, search: target.search } : undefined;
}

function accessLog(request: IncomingMessage, target: URL | null, status: number): void {
  log.info("router request", { method: request.method, path: target?.pathname, status });
}

/** The request's body, or undefined once it exceeds the limit; the rest is left unread. */
function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) return Promise.resolve(undefined);
  return new Promise((read, failed) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) read(undefined);
      else chunks.push(chunk);
    });
    request.once("end", () => read(Buffer.concat(chunks)));
    request.once("error", failed);
  });
}

/** Passes a close on: 1005 (no code given) and 1006 (no close frame at all) are codes a close frame may not carry. */
function passClose(to: WebSocket, code: number, reason: Buffer): void {
  if (code === 1006) to.terminate();
  else if (code === 1005) to.close();
  else to.close(code, reason);
}

/**
 * The one way from outside the VPC to the browser tasks: `/browsers/<task id>/...` is that task's
 * lease proxy, for DevTools WebSockets and for the pool functions' admin calls. The router opens a
 * client's WebSocket only once the task has accepted it, so the task's refusals (a wrong token, a
 * second client) reach the client as they are. It is a filter, not the lock: each task checks the
 * lease token and the admin secret itself.
 */
export function taskRouter(options: TaskRouterOptions): Server {
  const pingIntervalMs = options.pingIntervalMs ?? defaultPingIntervalMs;
  const sockets = new WebSocketServer({ noServer: true, clientTracking: false });
  const relayed = new Set<WebSocket>();

  options.signal?.addEventListener("abort", () => {
    for (const peer of relayed) peer.close(1001, "the router is shutting down");
  });

  async function forwardHttp(request: IncomingMessage, response: ServerResponse, route: TaskRoute): Promise<void> {
    const body = await readBody(request);
    if (body === undefined) {
      // The rest of the body stays unread, so the connection cannot serve another request.
      response.setHeader("connection", "close");
      return answer(response, 413, `an admin call's body is at most ${maxBodyBytes} bytes`);
    }
    const origin = await options.resolveTask(route.taskId);
    if (!origin) return answer(response, 404, "no such browser task");
    const headers: Record<string, string> = {};
    for (const name of ["authorization", "content-type"]) {
      const value = request.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    let status: number;
    const answerHeaders: Record<string, string> = {};
    let relayedBody: Buffer;
    try {
      // The path is appended to the origin, never resolved against it: `//host/...` stays a path.
      const upstream = await fetch(`${origin}${route.path}${route.search}`, {
        method: request.method,
        headers,
        body: body.length > 0 && request.method !== "GET" && request.method !== "HEAD" ? body : undefined,
        redirect: "manual",
        signal: AbortSignal.timeout(adminCallTimeoutMs),
      });
      ({ status } = upstream);
      for (const name of relayedAnswerHeaders) {
        const value = upstream.headers.get(name);
        if (value !== null) answerHeaders[name] = value;
      }
      relayedBody = Buffer.from(await upstream.arrayBuffer());
    } catch (error) {
      log.warn("browser task did not answer an admin call", { taskId: route.taskId, ...errorFields(error) });
      return answer(response, 502, "the browser task did not answer");
    }
    response.writeHead(status, answerHeaders).end(relayedBody);
  }

  const server = createServer((request, response) => {
    const target = targetOf(request);
    // The load balancer's health checks, every few seconds, would bury the requests worth reading.
    if (target?.pathname === "/health" && request.method === "GET") return answer(response, 200, "ok");
    response.once("finish", () => accessLog(request, target, response.statusCode));
    const route = taskRoute(target);
    if (!route) return answer(response, 404, "no such route");
    forwardHttp(request, response, route).catch((error: unknown) => {
      log.error("router request failed", { taskId: route.taskId, ...errorFields(error) });
      if (response.headersSent) response.destroy();
      else answer(response, 502, "the browser task could not be reached");
    });
  });

  function relay(client: WebSocket, upstream: WebSocket): void {
    const peers = [client, upstream];
    const answering = new Set(peers);
    const heartbeat = setInterval(() => {
      // A peer that stopped answering (a network path that died sends no close) would keep holding
      // the browser, which serves one client at a time.
      if (answering.size < peers.length) {
        for (const peer of peers) peer.terminate();
        return;
      }
      answering.clear();
      for (const peer of peers) peer.ping();
    }, pingIntervalMs);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      relayed.add(from);
      from.on("message", (data, isBinary) => to.send(data, { binary: isBinary }));
      from.on("pong", () => answering.add(from));
      // An error is followed by a close, which ends the other side too.
      from.on("error", () => to.terminate());
      from.once("close", (code, reason) => {
        relayed.delete(from);
        clearInterval(heartbeat);
        passClose(to, code, reason);
      });
    }
  }

  async function relayUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, target: URL, route: TaskRoute): Promise<void> {
    let answered = false;
    const refuse = (status: number, reason: string) => {
      if (answered) return;
      answered = true;
      accessLog(request, target, status);
      if (!socket.destroyed) refuseUpgrade(socket, status, reason);
    };
    const origin = await options.resolveTask(route.taskId).catch((error: unknown) => {
      log.error("browser task not looked up", { taskId: route.taskId, ...errorFields(error) });
      refuse(502, "the browser task could not be looked up");
      return undefined;
    });
    if (answered || socket.destroyed) return;
    if (!origin) return refuse(404, "no such browser task");

    const upstream = new WebSocket(`${origin}${route.path}${route.search}`, { handshakeTimeout: handshakeTimeoutMs });
    let client: WebSocket | undefined;
    // The client left before its upgrade was answered, or ws refused its handshake.
    socket.once("close", () => {
      answered = true;
      if (!client) upstream.terminate();
    });
    upstream.once("unexpected-response", (_request, response) => {
      const status = response.statusCode ?? 502;
      refuse(status >= 400 ? status : 502, "the browser task refused the connection");
      upstream.terminate();
    });
    upstream.once("error", () => refuse(502, "the browser task did not answer"));
    upstream.once("open", () => {
      answered = true;
      sockets.handleUpgrade(request, socket, head, (connected) => {
        client = connected;
        accessLog(request, target, 101);
        relay(connected, upstream);
      });
    });
  }

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    // The server's own error handling ends with the upgrade; a reset while the task is looked up is no crash.
    socket.on("error", () => socket.destroy());
    const target = targetOf(request);
    const route = taskRoute(target);
    if (!target || !route) {
      accessLog(request, target, 404);
      return refuseUpgrade(socket, 404, "no such route");
    }
    if (!target.searchParams.get("token")) {
      accessLog(request, target, 401);
      return refuseUpgrade(socket, 401, "a lease token is required");
    }
    relayUpgrade(request, socket, head, target, route).catch((error: unknown) => {
      log.error("router upgrade failed", { taskId: route.taskId, ...errorFields(error) });
      socket.destroy();
    });
  });

  return server;
}
