import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { connect as netConnect, type AddressInfo, type Socket } from "node:net";
import { pipeline, type Duplex } from "node:stream";
import { vetHost, type Resolver } from "../../policy/addresses.ts";
import { hostOf, scopeRefusal } from "../../policy/scope.ts";
import { systemResolver } from "../../policy/system-resolver.ts";
import type { LoginTarget } from "../types.ts";

/**
 * The forward proxy the login engine's Chromium sends every request through, so that the browser
 * meets the HTTP engine's network policy: the target's scope for every host, and (in AWS mode) the
 * address policy on the resolved address, with the connection then made to that vetted address.
 *
 * Written on node:http and node:net rather than taken from a proxy package: `proxy` resolves and
 * connects to the name itself, and `proxy-chain` (whose `dnsLookup` hook could pin the address)
 * does not carry WebSocket upgrades of plain requests and parses upstream answers with Node's
 * lenient parser, the wrong default at a security boundary.
 */

export interface PolicyProxy {
  /** `http://127.0.0.1:<port>`, for Chromium's `--proxy-server`. */
  server: string;
  /** What the proxy refused, each once: `host:port: reason` (never a path or query string). */
  refused(): string[];
  /** Stops listening and ends every open connection and tunnel. */
  close(): Promise<void>;
}

export interface PolicyProxyOptions {
  target: LoginTarget;
  /** Local mode: loopback and private networks are fair targets, and any port (test sites on 127.0.0.1). */
  allowPrivateTargets: boolean;
  /** Defaults to the system resolver. */
  resolve?: Resolver;
}

type Verdict =
  | { outcome: "allowed"; address: string; port: number }
  | { outcome: "refused"; reason: string }
  | { outcome: "unresolved" };

// A page can ask for endless distinct out-of-scope hosts; the list explains a login, it need not hold them all.
const maxRefusalsKept = 200;

// Headers that describe one hop's connection (RFC 9110 section 7.6.1), never forwarded as they are.
const hopByHopHeaders = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

const forbidden = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const badGateway = "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
const badRequest = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/** Answers a CONNECT or upgrade that goes nowhere; reading on lets the browser's close reach this side. */
function answerAndEnd(client: Duplex, reply: string): void {
  client.end(reply);
  client.resume();
}

export async function startPolicyProxy(options: PolicyProxyOptions): Promise<PolicyProxy> {
  const { target } = options;
  const policy = { allowPrivateTargets: options.allowPrivateTargets };
  const resolve = options.resolve ?? systemResolver;
  const refusals = new Set<string>();
  const sockets = new Set<Socket>();

  function track(socket: Socket): void {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  }

  /** The scope first (no DNS for a host out of scope), then one resolution whose answers are all vetted. */
  async function vet(url: URL): Promise<Verdict> {
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    const refuse = (reason: string): Verdict => {
      if (refusals.size < maxRefusalsKept) refusals.add(`${url.hostname}:${port}: ${reason}`);
      return { outcome: "refused", reason };
    };
    const scopeProblem = scopeRefusal(url, target, policy);
    if (scopeProblem) return refuse(scopeProblem);
    const verdict = await vetHost(hostOf(url), policy, resolve);
    if (verdict.outcome === "refused") return refuse(verdict.reason);
    if (verdict.outcome === "unresolved") return { outcome: "unresolved" };
    return { outcome: "allowed", address: verdict.addresses[0]!, port };
  }

  /**
   * Joins the client's socket to a new connection to the vetted address; `reply` goes to the client
   * once connected (a CONNECT's 200), `opening` to the server first (an upgrade's request head).
   */
  function tunnel(client: Duplex, endpoint: { address: string; port: number }, opening: Buffer, reply: string | null): void {
    // The browser may have given up while the name was being vetted.
    if (client.destroyed) return;
    const upstream = netConnect({ host: endpoint.address, port: endpoint.port });
    track(upstream);
    let connected = false;
    upstream.on("connect", () => {
      connected = true;
      if (reply) client.write(reply);
      if (opening.length > 0) upstream.write(opening);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on("error", () => {
      if (!connected && client.writable) answerAndEnd(client, badGateway);
      else client.destroy();
    });
    // The server's close ends the client's side gracefully, so bytes still queued for it arrive.
    upstream.on("close", () => {
      if (client.writable) client.end();
    });
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
  }

  async function onRequest(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = absoluteHttpUrl(request.url);
    if (!url) return void response.writeHead(400, { "content-length": "0" }).end();
    const verdict = await vet(url);
    if (verdict.outcome !== "allowed") {
      return void response.writeHead(verdict.outcome === "refused" ? 403 : 502, { "content-length": "0" }).end();
    }
    if (request.socket.destroyed) return;
    // Redirects go back to the browser as they came: it follows them, each through this proxy.
    const outgoing = httpRequest({
      host: verdict.address,
      port: verdict.port,
      method: request.method,
      path: `${url.pathname}${url.search}`,
      setHost: false,
      headers: ["host", url.host, ...endToEndHeaders(request.rawHeaders)],
      // Its own connection each time: a pooled one could have been vetted for another host.
      agent: false,
    });
    outgoing.on("response", (answer) => {
      try {
        response.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEndHeaders(answer.rawHeaders));
      } catch {
        // A header Node will not write again: the answer cannot be passed on.
        answer.destroy();
        return void response.writeHead(502, { "content-length": "0" }).end();
      }
      pipeline(answer, response, () => {});
    });
    outgoing.on("error", () => {
      if (response.headersSent) response.destroy();
      else response.writeHead(502, { "content-length": "0" }).end();
    });
    request.on("error", () => outgoing.destroy());
    response.on("close", () => {
      if (!response.writableFinished) outgoing.destroy();
    });
    request.pipe(outgoing);
  }

  async function onConnect(request: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on("error", () => client.destroy());
    const url = connectUrl(request.url);
    if (!url) return answerAndEnd(client, badRequest);
    const verdict = await vet(url);
    if (verdict.outcome === "refused") return answerAndEnd(client, forbidden);
    if (verdict.outcome === "unresolved") return answerAndEnd(client, badGateway);
    // The tunnel carries the browser's own TLS, so its SNI and certificate check keep the name.
    tunnel(client, verdict, head, "HTTP/1.1 200 Connection Established\r\n\r\n");
  }

  /** A WebSocket over plain HTTP: the request head goes on as it came, then bytes flow both ways. */
  async function onUpgrade(request: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on("error", () => client.destroy());
    const url = absoluteHttpUrl(request.url);
    if (!url) return answerAndEnd(client, badRequest);
    const verdict = await vet(url);
    if (verdict.outcome === "refused") return answerAndEnd(client, forbidden);
    if (verdict.outcome === "unresolved") return answerAndEnd(client, badGateway);
    const headers = ["host", url.host, ...endToEndHeaders(request.rawHeaders), "connection", "Upgrade", "upgrade", request.headers.upgrade ?? ""];
    const lines = [`${request.method} ${url.pathname}${url.search} HTTP/1.1`];
    for (let i = 0; i < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
    tunnel(client, verdict, Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), head]), null);
  }

  const server = createServer();
  server.on("connection", track);
  server.on("request", (request: IncomingMessage, response: ServerResponse) => {
    onRequest(request, response).catch(() => response.destroy());
  });
  server.on("connect", (request: IncomingMessage, client: Duplex, head: Buffer) => {
    onConnect(request, client, head).catch(() => client.destroy());
  });
  server.on("upgrade", (request: IncomingMessage, client: Duplex, head: Buffer) => {
    onUpgrade(request, client, head).catch(() => client.destroy());
  });
  await new Promise<void>((listening, failed) => {
    server.once("error", failed);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", failed);
      listening();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    server: `http://127.0.0.1:${port}`,
    refused: () => [...refusals],
    async close() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** A plain proxy request names its target in full (`GET http://host/path`); anything else is not for a proxy. */
function absoluteHttpUrl(requestTarget: string | undefined): URL | null {
  if (!requestTarget || !URL.canParse(requestTarget)) return null;
  const url = new URL(requestTarget);
  return url.protocol === "http:" ? url : null;
}

/** A CONNECT names `host:port` and nothing else. */
function connectUrl(authority: string | undefined): URL | null {
  if (!authority || !/^[^\s/?#@]+:\d{1,5}$/.test(authority) || !URL.canParse(`https://${authority}`)) return null;
  // https: stands for "a tunnel" here: the scope and port checks read only the host and port.
  return new URL(`https://${authority}`);
}

/** `rawHeaders` less the hop-by-hop ones and those the Connection header names as such. */
function endToEndHeaders(rawHeaders: string[]): string[] {
  const named = new Set(hopByHopHeaders);
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== "connection") continue;
    for (const token of rawHeaders[i + 1]!.split(",")) named.add(token.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (!named.has(rawHeaders[i]!.toLowerCase())) kept.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return kept;
}
