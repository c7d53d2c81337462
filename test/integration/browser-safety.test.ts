import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { once } from "node:events";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { escapeHtml } from "../sites/site-html.ts";
import { handlerClock, htmlReply, serveRoutes, textReply, type Route } from "../sites/site-http.ts";
import { browserPid, commandLineOf, loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";

/**
 * The login engine's browser keeps the same-origin policy: a page of one site cannot read what
 * another site answers it. Two servers on 127.0.0.1 on different ports are two origins.
 */

type Server = Awaited<ReturnType<typeof serveRoutes>>;

let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let page: Server;
let other: Server;
let browser: Browser | undefined;

const secret = "the other site's account data";

beforeAll(async () => {
  chromium = await loginChromiumForTests();
  page = await serveRoutes(
    new Map<string, Route>([
      ["/", { GET: () => htmlReply("<!doctype html><title>Reader</title><h1>Reader</h1>") }],
      ["/framing", { GET: ({ query }) => htmlReply(`<!doctype html><title>Framing</title><iframe src="${escapeHtml(query.get("src") ?? "")}"></iframe>`) }],
    ]),
    handlerClock(),
  );
  other = await serveRoutes(
    new Map<string, Route>([
      ["/account", { GET: () => textReply(secret) }],
      ["/frame", { GET: () => htmlReply(`<!doctype html><title>Account</title><p>${secret}</p>`) }],
      ["/shared", { GET: () => ({ ...textReply("public data"), headers: { "content-type": "text/plain", "access-control-allow-origin": "*" } }) }],
    ]),
    handlerClock(),
  );
});

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  await Promise.all([page?.stop(), other?.stop()]);
  const left = chromium.running();
  await chromium.dispose();
  expect(left).toEqual([]);
});

async function readerPage() {
  browser = await chromium.launch();
  const reader = await (await browser.newContext()).newPage();
  await reader.goto(`http://127.0.0.1:${page.port}/`);
  return reader;
}

/**
 * A STUN server on 127.0.0.1 that answers every binding request with the sender's address, as a real
 * one does: a browser allowed to send it UDP would learn a server-reflexive (srflx) candidate.
 */
async function startStunServer(): Promise<{ socket: UdpSocket; port: number; received: string[] }> {
  const socket = createSocket("udp4");
  const received: string[] = [];
  socket.on("message", (message, sender) => {
    received.push(`${sender.address}:${sender.port}`);
    const magicCookie = 0x2112a442;
    const mapped = Buffer.alloc(12);
    mapped.writeUInt16BE(0x0020, 0); // XOR-MAPPED-ADDRESS
    mapped.writeUInt16BE(8, 2);
    mapped.writeUInt16BE(0x0001, 4); // IPv4
    mapped.writeUInt16BE(sender.port ^ (magicCookie >>> 16), 6);
    mapped.writeUInt32BE((sender.address.split(".").reduce((value, octet) => value * 256 + Number(octet), 0) ^ magicCookie) >>> 0, 8);
    const header = Buffer.alloc(20);
    header.writeUInt16BE(0x0101, 0); // binding success
    header.writeUInt16BE(mapped.length, 2);
    header.writeUInt32BE(magicCookie, 4);
    message.copy(header, 8, 8, 20); // the request's transaction id
    socket.send(Buffer.concat([header, mapped]), sender.port, sender.address);
  });
  socket.bind(0, "127.0.0.1");
  await once(socket, "listening");
  return { socket, port: socket.address().port, received };
}

describe("the login browser's WebRTC", () => {
  it("sends no UDP to a STUN server a page names, so it learns no address around the proxy", async () => {
    // Prepare
    const stun = await startStunServer();
    try {
      const reader = await readerPage();

      // Act
      const candidates = await reader.evaluate(async (server) => {
        type Connection = {
          onicecandidate: ((event: { candidate: { candidate: string } | null }) => void) | null;
          createDataChannel(label: string): unknown;
          createOffer(): Promise<unknown>;
          setLocalDescription(offer: unknown): Promise<void>;
          close(): void;
        };
        const { RTCPeerConnection } = globalThis as unknown as { RTCPeerConnection: new (config: { iceServers: Array<{ urls: string }> }) => Connection };
        const connection = new RTCPeerConnection({ iceServers: [{ urls: server }] });
        const found: string[] = [];
        // A null candidate ends the gathering: every server named has been asked, or given up.
        const gathered = new Promise<void>((done) => {
          connection.onicecandidate = ({ candidate }) => (candidate ? found.push(candidate.candidate) : done());
        });
        connection.createDataChannel("probe");
        await connection.setLocalDescription(await connection.createOffer());
        await gathered;
        connection.close();
        return found;
      }, `stun:127.0.0.1:${stun.port}`);

      // Assess
      expect(candidates.filter((candidate) => / typ srflx /.test(candidate))).toEqual([]);
      expect(candidates.filter((candidate) => / udp /i.test(candidate))).toEqual([]);
      expect(stun.received).toEqual([]);
    } finally {
      stun.socket.close();
    }
  });
});

describe("the login browser's same-origin policy", () => {
  it("lets a page read another origin's answer only when that origin allows it by CORS", async () => {
    // Prepare
    const reader = await readerPage();
    const otherOrigin = `http://127.0.0.1:${other.port}`;

    // Act
    const results = await reader.evaluate(async (origin) => {
      const read = (path: string) =>
        fetch(`${origin}${path}`).then(
          (response) => response.text(),
          (error: Error) => `rejected: ${error.name}`,
        );
      return { withoutCors: await read("/account"), withCors: await read("/shared") };
    }, otherOrigin);

    // Assess
    expect(results.withoutCors).toBe("rejected: TypeError");
    expect(results.withCors).toBe("public data");
  });

  it("gives a page no access to the document of another origin's frame", async () => {
    // Prepare
    const reader = await readerPage();
    const otherOrigin = `http://127.0.0.1:${other.port}`;

    // Act
    await reader.goto(`http://127.0.0.1:${page.port}/framing?src=${encodeURIComponent(`${otherOrigin}/frame`)}`);
    const readable = await reader.locator("iframe").evaluate((frame: { contentDocument: unknown }) => frame.contentDocument !== null);
    const framed = reader.frames().find((frame) => frame.url() === `${otherOrigin}/frame`);

    // Assess
    expect(readable).toBe(false);
    // The frame did load the other site's page: only the reading was refused.
    expect(await framed?.textContent("p")).toBe(secret);
  });

  it("runs without --disable-web-security on its command line", async () => {
    // Prepare
    browser = await chromium.launch();

    // Act
    const commandLine = commandLineOf(await browserPid(browser));

    // Assess
    expect(commandLine?.some((arg) => arg.includes("--headless"))).toBe(true);
    expect(commandLine?.some((arg) => arg.startsWith("--disable-web-security"))).toBe(false);
  });

  it("leaves no browser process behind once closed", async () => {
    // Prepare
    const opened = await chromium.launch();
    const pid = await browserPid(opened);

    // Act
    await opened.close();

    // Assess
    await eventually(async () => (commandLineOf(pid) === undefined ? true : undefined), `browser ${pid} to exit`);
  });
});
