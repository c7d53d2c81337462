import { timingSafeEqual } from "node:crypto";
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { z } from "zod";
import type { BrowserConnection } from "./browser-connection.ts";
import { sha256 } from "./digest.ts";

export interface LeaseProxyOptions {
  /** Authorizes the admin calls (lease, health): only the provider that launched the browser holds it. */
  adminSecretSha256: string;
  /** The one DevTools endpoint's path, `/devtools/browser/<id>`. */
  devtoolsPath: string;
  connection: BrowserConnection;
  /** Whether Chromium answers over its pipe. */
  chromiumUp(): Promise<boolean>;
  /** Leaves the browser as a new lease's holder should find it, whatever the last holder did. */
  resetBrowser(): Promise<void>;
}

const leaseBody = z.object({
  lease_id: z.string().min(1).max(200),
  token_sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lower-case hex digits"),
  expires_at: z.iso.datetime(),
});

/** An admin call's body is a few dozen bytes; anything much larger is not one. */
const maxBodyBytes = 4096;

/** setTimeout fires at once for a delay above this, so a later expiry is waited for in steps. */
const maxTimerMs = 2 ** 31 - 1;

function sameDigest(text: string, digest: Buffer): boolean {
  return timingSafeEqual(sha256(text), digest);
}

/** Follows ws's own pattern for refusing an upgrade: a plain HTTP answer on the raw socket, then close. */
export function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`,
  );
}

export function answer(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }).end(body);
}

async function readBody(request: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBodyBytes) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The only way into the browser: the DevTools WebSocket for the holder of the current lease's
 * token, and the admin calls for the holder of the admin secret. Nothing of DevTools answers anyone
 * else, HTTP routes such as /json/version included. It serves one DevTools client at a time: the
 * browser has one pipe, and a lease is one client's; a second one is refused while the first is
 * connected. When a lease ends (ended, expired or replaced) the browser is reset, and the next lease
 * is granted only once the reset has left it clean.
 */
export function leaseProxy(options: LeaseProxyOptions): Server {
  const adminDigest = Buffer.from(options.adminSecretSha256, "hex");
  const sockets = new WebSocketServer({ noServer: true });
  let lease: { id: string; tokenSha256: Buffer; expiresAt: number } | undefined;
  let expiryTimer: NodeJS.Timeout | undefined;
  let client: WebSocket | undefined;
  /** The reset that followed the last lease's end. */
  let reset: Promise<void> = Promise.resolve();

  const isAdmin = (request: IncomingMessage) => {
    const [scheme, secret] = (request.headers.authorization ?? "").split(" ");
    return scheme === "Bearer" && secret !== undefined && sameDigest(secret, adminDigest);
  };

  function holdsLease(token: string | null): boolean {
    return lease !== undefined && token !== null && Date.now() < lease.expiresAt && sameDigest(token, lease.tokenSha256);
  }

  function cutClient(reason: string): void {
    if (!client) return;
    // Detached first, so not one more message passes either way while the close handshake runs.
    options.connection.detach(client);
    client.close(1008, reason);
    client = undefined;
  }

  function endCurrentLease(reason: string): void {
    lease = undefined;
    clearTimeout(expiryTimer);
    cutClient(reason);
    // Run after the previous reset, whatever its outcome: the latest one alone says whether the browser is clean.
    reset = reset.catch(() => {}).then(() => options.resetBrowser());
    // An expiry's reset has no caller: its failure reaches the next grant or end, which wait for it.
    reset.catch(() => {});
  }

  function watchExpiry(): void {
    clearTimeout(expiryTimer);
    if (!lease) return;
    const left = lease.expiresAt - Date.now();
    if (left > 0) {
      expiryTimer = setTimeout(watchExpiry, Math.min(left, maxTimerMs));
      return;
    }
    endCurrentLease("the lease expired");
  }

  async function grantLease(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const text = await readBody(request);
    let json: unknown;
    try {
      json = JSON.parse(text ?? "");
    } catch {
      return answer(response, 400, "the body must be JSON of at most 4096 bytes");
    }
    const parsed = leaseBody.safeParse(json);
    if (!parsed.success) return answer(response, 400, z.prettifyError(parsed.error));
    const tokenSha256 = Buffer.from(parsed.data.token_sha256, "hex");
    // The client of an earlier lease loses the browser to the new holder, who gets it reset. A lease
    // granted while this grant waited is ended in turn: the latest grant wins.
    for (;;) {
      await reset;
      if (!lease || (lease.id === parsed.data.lease_id && timingSafeEqual(lease.tokenSha256, tokenSha256))) break;
      endCurrentLease("the lease ended");
    }
    lease = { id: parsed.data.lease_id, tokenSha256, expiresAt: Date.parse(parsed.data.expires_at) };
    watchExpiry();
    answer(response, 204, "");
  }

  /**
   * Ends lease `leaseId` if it is the current one; a lease ended already, or replaced since, is left
   * as it is. Answers once the browser is reset: a browser released for reuse is clean, or known
   * not to be.
   */
  async function endLease(leaseId: string | null, response: ServerResponse): Promise<void> {
    if (!leaseId) return answer(response, 400, "lease_id is required: the lease to end");
    if (lease?.id === leaseId) endCurrentLease("the lease ended");
    await reset;
    answer(response, 204, "");
  }

  async function health(response: ServerResponse): Promise<void> {
    if (await options.chromiumUp()) answer(response, 200, "chromium is up");
    else answer(response, 503, "chromium does not answer");
  }

  const server = createServer((request, response) => {
    if (!isAdmin(request)) return answer(response, 401, "only the lease's DevTools WebSocket and the admin calls are served here");
    const url = new URL(request.url ?? "/", "http://entry");
    const path = url.pathname;
    if (path === "/lease" && request.method === "PUT") return void grantLease(request, response).catch(() => answer(response, 500, "the lease was not granted"));
    if (path === "/lease" && request.method === "DELETE") {
      return void endLease(url.searchParams.get("lease_id"), response).catch(() => answer(response, 500, "the browser could not be reset"));
    }
    if (path === "/health" && request.method === "GET") return void health(response);
    answer(response, 404, "no such admin route");
  });

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? "/", "http://entry");
    if (!holdsLease(url.searchParams.get("token"))) return refuseUpgrade(socket, 401, "a valid lease token is required");
    if (url.pathname !== options.devtoolsPath) return refuseUpgrade(socket, 404, "no such DevTools endpoint");
    if (client) return refuseUpgrade(socket, 409, "another DevTools client is connected: this browser serves one client at a time");
    sockets.handleUpgrade(request, socket, head, (connected) => {
      client = connected;
      options.connection.attach(connected);
      connected.on("message", (data) => options.connection.fromClient(connected, data.toString()));
      connected.on("close", () => {
        options.connection.detach(connected);
        if (client === connected) client = undefined;
      });
    });
  });

  server.on("close", () => {
    clearTimeout(expiryTimer);
    cutClient("the browser is shutting down");
  });

  return server;
}
