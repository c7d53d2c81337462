import { createHash } from "node:crypto";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { connect as netConnect, createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { unpackedChromium } from "#shared/browsers/local-chromium.ts";
import type { Resolver } from "#shared/policy/addresses.ts";
import { launchLoginBrowser } from "#shared/login/browser/chromium.ts";
import { startPolicyProxy, type PolicyProxy } from "#shared/login/browser/network-policy-proxy.ts";
import type { LoginTarget } from "#shared/login/types.ts";
import { eventually } from "../support/poll.ts";

const target: LoginTarget = { domain: "example.test", loginUrl: null, allowedDomains: ["partner.test"] };

/** Answers from a table and counts each name's lookups; a name not in the table does not resolve. */
function stubResolver(table: Record<string, string[] | (() => string[])>) {
  const lookups = new Map<string, number>();
  const resolve: Resolver = async (host) => {
    lookups.set(host, (lookups.get(host) ?? 0) + 1);
    const answer = table[host];
    if (!answer) throw Object.assign(new Error(`${host} is not in the test's table`), { code: "ENOTFOUND" });
    return typeof answer === "function" ? answer() : answer;
  };
  return { resolve, lookups: (host: string) => lookups.get(host) ?? 0 };
}

/** One answer, then a different one: a proxy that looks the name up twice would use the second. */
function firstThen(first: string[], later: string[]): () => string[] {
  let asked = false;
  return () => {
    const answer = asked ? later : first;
    asked = true;
    return answer;
  };
}

const webSocketGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** A server text frame (unmasked, under 126 bytes). */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
}

/** Every site of the test on one 127.0.0.1 server, told apart by Host; it logs what reached it. */
interface Origin {
  port: number;
  seen: string[];
  server: Server;
}

async function startOrigin(): Promise<Origin> {
  const seen: string[] = [];
  const server = createServer(async (request, response) => {
    const host = (request.headers.host ?? "").replace(/:\d+$/, "");
    seen.push(`${request.method} ${host}${request.url}`);
    const path = new URL(request.url ?? "/", "http://origin").pathname;
    const port = (server.address() as AddressInfo).port;
    if (path === "/echo") {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      response.writeHead(201, { "content-type": "text/plain", "x-seen-host": request.headers.host ?? "" });
      return void response.end(`${request.method} ${request.url} ${Buffer.concat(chunks).toString()}`);
    }
    if (path === "/app.js") {
      response.writeHead(200, { "content-type": "text/javascript" });
      return void response.end("window.cdnScript = 'loaded';");
    }
    if (path === "/data") {
      response.writeHead(200, { "content-type": "text/plain", "access-control-allow-origin": "*" });
      return void response.end("in-scope data");
    }
    if (path === "/") {
      response.writeHead(200, { "content-type": "text/html" });
      return void response.end(`<!doctype html><title>login</title>
<script>
  window.results = {};
  const settle = (name, value) => { window.results[name] = value; };
  fetch("http://api.example.test:${port}/data").then((r) => r.text()).then((t) => settle("inScopeFetch", t), () => settle("inScopeFetch", "failed"));
  fetch("http://tracker.other.test:${port}/collect?token=s3cret").then(() => settle("outOfScopeFetch", "loaded"), () => settle("outOfScopeFetch", "failed"));
  const socket = new WebSocket("ws://login.example.test:${port}/live");
  socket.onmessage = (event) => settle("webSocket", event.data);
  socket.onerror = () => settle("webSocket", "failed");
</script>
<script src="http://cdn.example.test:${port}/app.js" onload="settle('cdnScript', 'loaded')" onerror="settle('cdnScript', 'failed')"></script>
<script src="http://tracker.other.test:${port}/t.js" onload="settle('trackerScript', 'loaded')" onerror="settle('trackerScript', 'failed')"></script>`);
    }
    response.writeHead(404, { "content-length": "0" }).end();
  });
  server.on("upgrade", (request: IncomingMessage, socket: Socket) => {
    const host = (request.headers.host ?? "").replace(/:\d+$/, "");
    seen.push(`UPGRADE ${host}${request.url}`);
    socket.on("error", () => socket.destroy());
    // The server keeps sockets half-open: once the proxy ends its side, end this one too.
    socket.on("end", () => socket.end());
    socket.resume();
    const accept = createHash("sha1").update(`${request.headers["sec-websocket-key"]}${webSocketGuid}`).digest("base64");
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    socket.write(textFrame(`hello from ${host}`));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { port: (server.address() as AddressInfo).port, seen, server };
}

/** Bytes a client socket has received so far, as text. */
function collect(socket: Socket): () => string {
  let text = "";
  socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
  return () => text;
}

async function openToProxy(proxy: PolicyProxy): Promise<Socket> {
  const socket = netConnect({ host: "127.0.0.1", port: Number(new URL(proxy.server).port) });
  await once(socket, "connect");
  return socket;
}

/** Sends `head` to the proxy and waits for its status line. */
async function rawExchange(proxy: PolicyProxy, head: string): Promise<{ socket: Socket; received: () => string; status: string }> {
  const socket = await openToProxy(proxy);
  const received = collect(socket);
  socket.write(head);
  const status = await eventually(async () => (received().includes("\r\n") ? received().split("\r\n")[0] : undefined), "the proxy's status line");
  return { socket, received, status };
}

function connectThrough(proxy: PolicyProxy, authority: string) {
  return rawExchange(proxy, `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
}

/** A plain proxy request: the absolute URL as the request target, as a browser sends it to its proxy. */
async function getThrough(proxy: PolicyProxy, url: string, init: { method?: string; body?: string } = {}) {
  const proxyUrl = new URL(proxy.server);
  const outgoing = httpRequest({
    host: proxyUrl.hostname,
    port: proxyUrl.port,
    method: init.method ?? "GET",
    path: url,
    headers: { host: new URL(url).host, "proxy-connection": "keep-alive" },
    agent: false,
  });
  outgoing.end(init.body);
  const [response] = (await once(outgoing, "response")) as [IncomingMessage];
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks).toString() };
}

let origin: Origin;
const proxies: PolicyProxy[] = [];
const sockets: Socket[] = [];

async function proxyFor(resolve: Resolver, allowPrivateTargets: boolean): Promise<PolicyProxy> {
  const proxy = await startPolicyProxy({ target, allowPrivateTargets, resolve });
  proxies.push(proxy);
  return proxy;
}

beforeAll(async () => {
  origin = await startOrigin();
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

afterAll(async () => {
  origin.server.closeAllConnections();
  await new Promise((closed) => origin.server.close(closed));
});

describe("in local mode (test sites on 127.0.0.1)", () => {
  it("forwards a plain request to an in-scope host, streaming the body both ways and keeping the Host", async () => {
    const { resolve } = stubResolver({ "login.example.test": ["127.0.0.1"] });
    const proxy = await proxyFor(resolve, true);

    const answer = await getThrough(proxy, `http://login.example.test:${origin.port}/echo?step=1`, { method: "POST", body: "user=alice" });

    expect(answer).toMatchObject({ status: 201, body: "POST /echo?step=1 user=alice" });
    expect(answer.headers["x-seen-host"]).toBe(`login.example.test:${origin.port}`);
    expect(proxy.refused()).toEqual([]);
  });

  it("passes redirects back to the browser instead of following them", async () => {
    const { resolve } = stubResolver({ "login.example.test": ["127.0.0.1"] });
    const proxy = await proxyFor(resolve, true);

    const answer = await getThrough(proxy, `http://login.example.test:${origin.port}/missing`);

    expect(answer.status).toBe(404);
    expect(origin.seen.filter((line) => line.includes("/missing"))).toHaveLength(1);
  });

  it("tunnels a CONNECT to an in-scope host's vetted address", async () => {
    const echo = createTcpServer((socket) => socket.pipe(socket));
    echo.listen(0, "127.0.0.1");
    await once(echo, "listening");
    try {
      const { resolve } = stubResolver({ "secure.example.test": ["127.0.0.1"] });
      const proxy = await proxyFor(resolve, true);

      const { socket, received, status } = await connectThrough(proxy, `secure.example.test:${(echo.address() as AddressInfo).port}`);
      sockets.push(socket);
      socket.write("ping through the tunnel");

      expect(status).toBe("HTTP/1.1 200 Connection Established");
      await eventually(async () => (received().endsWith("ping through the tunnel") ? true : undefined), "the echo through the tunnel");
    } finally {
      echo.close();
    }
  });

  it("carries a WebSocket upgrade of a plain request", async () => {
    const { resolve } = stubResolver({ "login.example.test": ["127.0.0.1"] });
    const proxy = await proxyFor(resolve, true);
    const authority = `login.example.test:${origin.port}`;

    const { socket, received, status } = await rawExchange(
      proxy,
      `GET http://${authority}/live HTTP/1.1\r\nHost: ${authority}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nProxy-Connection: keep-alive\r\n\r\n`,
    );
    sockets.push(socket);

    expect(status).toBe("HTTP/1.1 101 Switching Protocols");
    await eventually(async () => (received().includes("hello from login.example.test") ? true : undefined), "the server's first frame");
    expect(received()).toContain("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  });

  it("refuses a host outside the domain, allowed_domains and the SSO providers, before any lookup, without detail", async () => {
    const { resolve, lookups } = stubResolver({ "tracker.other.test": ["127.0.0.1"], "api.partner.test": ["127.0.0.1"] });
    const proxy = await proxyFor(resolve, true);

    const plain = await getThrough(proxy, `http://tracker.other.test:${origin.port}/collect?token=s3cret`);
    const tunnel = await connectThrough(proxy, `tracker.other.test:${origin.port}`);
    sockets.push(tunnel.socket);
    const allowedDomain = await getThrough(proxy, `http://api.partner.test:${origin.port}/echo`);

    expect(plain).toMatchObject({ status: 403, body: "" });
    expect(tunnel.status).toBe("HTTP/1.1 403 Forbidden");
    await eventually(async () => (tunnel.socket.readableEnded ? true : undefined), "the refused tunnel's end");
    expect(tunnel.received()).toBe("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    expect(allowedDomain.status).toBe(201);
    expect(lookups("tracker.other.test")).toBe(0);
    expect(origin.seen.some((line) => line.includes("tracker.other.test"))).toBe(false);
    expect(proxy.refused()).toEqual([expect.stringMatching(new RegExp(`^tracker\\.other\\.test:${origin.port}: tracker\\.other\\.test is outside`))]);
    expect(proxy.refused().join()).not.toContain("s3cret");
  });

  it("connects to the address it vetted, looking the name up once per connection", async () => {
    const { resolve, lookups } = stubResolver({
      "login.example.test": firstThen(["127.0.0.1"], ["192.0.2.1"]),
      "tunnel.example.test": firstThen(["127.0.0.1"], ["192.0.2.1"]),
    });
    const proxy = await proxyFor(resolve, true);

    const plain = await getThrough(proxy, `http://login.example.test:${origin.port}/echo`);
    const { socket, status } = await connectThrough(proxy, `tunnel.example.test:${origin.port}`);
    sockets.push(socket);

    expect(plain.status).toBe(201);
    expect(status).toBe("HTTP/1.1 200 Connection Established");
    expect(lookups("login.example.test")).toBe(1);
    expect(lookups("tunnel.example.test")).toBe(1);
  });

  it("answers 502 for a status line Node will not write again, and goes on serving", async () => {
    const odd = createTcpServer((socket) => {
      socket.on("error", () => socket.destroy());
      socket.once("data", () => socket.end("HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n"));
    });
    odd.listen(0, "127.0.0.1");
    await once(odd, "listening");
    try {
      const { resolve } = stubResolver({ "odd.example.test": ["127.0.0.1"], "login.example.test": ["127.0.0.1"] });
      const proxy = await proxyFor(resolve, true);

      const oddAnswer = await getThrough(proxy, `http://odd.example.test:${(odd.address() as AddressInfo).port}/`);
      const next = await getThrough(proxy, `http://login.example.test:${origin.port}/echo`);

      expect([oddAnswer.status, next.status]).toEqual([502, 201]);
    } finally {
      odd.close();
    }
  });

  it("answers 502 for a name that does not resolve, without calling it refused", async () => {
    const { resolve } = stubResolver({});
    const proxy = await proxyFor(resolve, true);

    const plain = await getThrough(proxy, `http://gone.example.test:${origin.port}/`);
    const tunnel = await connectThrough(proxy, `gone.example.test:443`);
    sockets.push(tunnel.socket);

    expect(plain.status).toBe(502);
    expect(tunnel.status).toBe("HTTP/1.1 502 Bad Gateway");
    expect(proxy.refused()).toEqual([]);
  });

  it("ends open tunnels when closed", async () => {
    const { resolve } = stubResolver({ "login.example.test": ["127.0.0.1"] });
    const proxy = await proxyFor(resolve, true);
    const { socket, status } = await connectThrough(proxy, `login.example.test:${origin.port}`);
    sockets.push(socket);
    expect(status).toBe("HTTP/1.1 200 Connection Established");

    const ended = once(socket, "close");
    await proxy.close();

    await ended;
  });
});

describe("in AWS mode", () => {
  const inward = { "metadata.example.test": ["169.254.169.254"], "intranet.example.test": ["10.0.0.1"], "loopback.example.test": ["::1"] };

  it.each([
    ["metadata.example.test", "a link-local address"],
    ["intranet.example.test", "a private address"],
    ["loopback.example.test", "a loopback address"],
  ])("refuses %s, which resolves to %s, for plain requests and tunnels", async (host, refusal) => {
    const { resolve } = stubResolver(inward);
    const proxy = await proxyFor(resolve, false);

    const plain = await getThrough(proxy, `http://${host}/latest/meta-data/`);
    const tunnel = await connectThrough(proxy, `${host}:443`);
    sockets.push(tunnel.socket);

    expect(plain.status).toBe(403);
    expect(tunnel.status).toBe("HTTP/1.1 403 Forbidden");
    expect(proxy.refused()).toEqual([`${host}:80: ${host}: it resolves to ${inward[host as keyof typeof inward][0]}, ${refusal}, which this deployment does not reach`, expect.stringMatching(new RegExp(`^${host.replaceAll(".", "\\.")}:443: `))]);
  });

  it("refuses a port other than 80 and 443 before any lookup", async () => {
    const { resolve, lookups } = stubResolver({ "login.example.test": ["93.184.215.14"] });
    const proxy = await proxyFor(resolve, false);

    const plain = await getThrough(proxy, `http://login.example.test:8080/`);
    const tunnel = await connectThrough(proxy, "login.example.test:8443");
    sockets.push(tunnel.socket);

    expect(plain.status).toBe(403);
    expect(tunnel.status).toBe("HTTP/1.1 403 Forbidden");
    expect(lookups("login.example.test")).toBe(0);
    expect(proxy.refused()).toEqual([expect.stringMatching(/^login\.example\.test:8080: .*port 8080 is not 80 or 443/), expect.stringMatching(/^login\.example\.test:8443: .*port 8443/)]);
  });

  it("refuses loopback, where Lambda's runtime API listens, even when it is the target's own domain", async () => {
    const proxy = await startPolicyProxy({ target: { domain: "127.0.0.1", loginUrl: null, allowedDomains: ["localhost"] }, allowPrivateTargets: false, resolve: stubResolver({}).resolve });
    proxies.push(proxy);

    const runtimeApi = await getThrough(proxy, "http://127.0.0.1:9001/2018-06-01/runtime/invocation/next");
    const webPort = await getThrough(proxy, "http://127.0.0.1/2018-06-01/runtime/invocation/next");
    const tunnel = await connectThrough(proxy, "localhost:443");
    sockets.push(tunnel.socket);

    expect([runtimeApi.status, webPort.status, tunnel.status]).toEqual([403, 403, "HTTP/1.1 403 Forbidden"]);
    expect(proxy.refused()).toEqual([
      expect.stringMatching(/^127\.0\.0\.1:9001: /),
      "127.0.0.1:80: 127.0.0.1: a loopback address, which this deployment does not reach",
      "localhost:443: localhost: it resolves to 127.0.0.1, a loopback address, which this deployment does not reach",
    ]);
  });
});

describe("the login engine's Chromium behind the proxy", () => {
  let unpackRoot: string | undefined;

  afterAll(async () => {
    if (unpackRoot) await rm(unpackRoot, { recursive: true, force: true });
  });

  async function chromiumExecutable(): Promise<string> {
    if (process.env.BROWSER_EXECUTABLE) return process.env.BROWSER_EXECUTABLE;
    unpackRoot = await mkdtemp(join(tmpdir(), "policy-proxy-chromium-"));
    return unpackedChromium(unpackRoot);
  }

  it("loads in-scope subresources, fetches and WebSockets and refuses out-of-scope ones", async () => {
    const everyNameIsLocal = stubResolver({
      "login.example.test": ["127.0.0.1"],
      "cdn.example.test": ["127.0.0.1"],
      "api.example.test": ["127.0.0.1"],
      "tracker.other.test": ["127.0.0.1"],
    });
    const proxy = await proxyFor(everyNameIsLocal.resolve, true);
    const browser = await launchLoginBrowser({ executablePath: await chromiumExecutable(), proxyServer: proxy.server });
    try {
      const page = await browser.newPage();
      await page.goto(`http://login.example.test:${origin.port}/`);
      await page.waitForFunction(() => {
        const results = (globalThis as unknown as { results: Record<string, string> }).results;
        return ["inScopeFetch", "outOfScopeFetch", "webSocket", "cdnScript", "trackerScript"].every((name) => name in results);
      });
      const results = await page.evaluate(() => (globalThis as unknown as { results: Record<string, string> }).results);

      expect(results).toEqual({
        inScopeFetch: "in-scope data",
        outOfScopeFetch: "failed",
        webSocket: "hello from login.example.test",
        cdnScript: "loaded",
        trackerScript: "failed",
      });
      expect(origin.seen.some((line) => line.includes("tracker.other.test"))).toBe(false);
      expect(everyNameIsLocal.lookups("tracker.other.test")).toBe(0);
      expect(proxy.refused()).toEqual(expect.arrayContaining([expect.stringMatching(new RegExp(`^tracker\\.other\\.test:${origin.port}: `))]));
    } finally {
      await browser.close();
    }
  });

  it("in AWS mode, loads nothing from loopback by IPv4 or IPv6, though it is the target's own domain", async () => {
    const seenOnIpv6: string[] = [];
    const ipv6Origin = createServer((request, response) => {
      seenOnIpv6.push(`${request.method} ${request.url}`);
      response.end("loopback data");
    });
    ipv6Origin.listen(0, "::1");
    await once(ipv6Origin, "listening");
    const ipv6Port = (ipv6Origin.address() as AddressInfo).port;
    const proxy = await startPolicyProxy({ target: { domain: "127.0.0.1", loginUrl: null, allowedDomains: ["::1"] }, allowPrivateTargets: false, resolve: stubResolver({}).resolve });
    proxies.push(proxy);
    const seenBefore = origin.seen.length;
    const browser = await launchLoginBrowser({ executablePath: await chromiumExecutable(), proxyServer: proxy.server });
    try {
      const page = await browser.newPage();
      const statuses: Array<number | undefined> = [];
      // The web's own port too, where the refusal is the address's rather than the port's.
      for (const url of [`http://127.0.0.1:${origin.port}/`, `http://[::1]:${ipv6Port}/`, "http://127.0.0.1/", "http://[::1]/"]) {
        statuses.push((await page.goto(url))?.status());
      }

      expect(statuses).toEqual([403, 403, 403, 403]);
      expect(origin.seen.slice(seenBefore)).toEqual([]);
      expect(seenOnIpv6).toEqual([]);
      expect(proxy.refused()).toEqual([
        expect.stringMatching(new RegExp(`^127\\.0\\.0\\.1:${origin.port}: .*port ${origin.port} is not 80 or 443`)),
        expect.stringMatching(new RegExp(`^\\[::1\\]:${ipv6Port}: .*port ${ipv6Port} is not 80 or 443`)),
        "127.0.0.1:80: 127.0.0.1: a loopback address, which this deployment does not reach",
        "[::1]:80: ::1: a loopback address, which this deployment does not reach",
      ]);
    } finally {
      await browser.close();
      ipv6Origin.closeAllConnections();
      await new Promise((closed) => ipv6Origin.close(closed));
    }
  });
});
