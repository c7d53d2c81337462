import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginTarget } from "#shared/login/types.ts";

/** A site that takes the connection and never answers, and one that starts its page and never ends it. */
let silent: Server;
let stalled: HttpServer;
const sockets = new Set<Socket>();

function portOf(server: Server | HttpServer): number {
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  stalled = createHttpServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.write("<html><body>");
  });
  await Promise.all([silent, stalled].map((server) => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))));
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  stalled?.closeAllConnections();
  await Promise.all([silent, stalled].map((server) => new Promise((resolve) => server?.close(resolve))));
});

// Without a step's deadline (a health check's probe) the client's own timeout is all that ends the wait.
const engine = createLoginEngine({ allowPrivateTargets: true, timeoutMs: 250 });
const target = (port: number): LoginTarget => ({ domain: "127.0.0.1", loginUrl: `http://127.0.0.1:${port}/login`, allowedDomains: [] });
const noSession = { cookies: [], origins: [] };

describe("a site that stops answering, checked without a deadline", () => {
  it("is unreachable when it never answers", async () => {
    const port = portOf(silent);
    const outcome = await engine.probe(target(port), noSession, `http://127.0.0.1:${port}/home`, null);

    expect(outcome).toEqual({ state: "unreachable", reason: "127.0.0.1 did not answer within 250 ms" });
  });

  it("is unreachable when its page never ends", async () => {
    const port = portOf(stalled);
    const outcome = await engine.probe(target(port), noSession, `http://127.0.0.1:${port}/home`, null);

    expect(outcome.state).toBe("unreachable");
  });
});
