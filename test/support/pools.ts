import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { WebSocket } from "ws";
import type { LocalStack } from "../../infra/local/stack.ts";
import { eventually } from "./poll.ts";

/** JSON over the local gateway with the stack's key; answers status, headers and parsed body. */
export function poolApi(stack: Pick<LocalStack, "url" | "apiKey">) {
  return async function call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, rawBody?: string) {
    const headers: Record<string, string> = { authorization: `Bearer ${stack.apiKey}` };
    const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
    if (payload !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${stack.url}${path}`, { method, headers, body: payload });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as T };
  };
}

/**
 * The Chromium browser processes (not their helpers) running with a profile under `root`, by
 * session id, read from /proc: what really runs, independent of the service's records.
 */
export function chromiumProcesses(root: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    let state: string;
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    } catch {
      continue;
    }
    if (state === "Z" || args.some((arg) => arg.startsWith("--type="))) continue;
    const dataDir = args.find((arg) => arg.startsWith(`--user-data-dir=${root}/`));
    if (dataDir) found.set(dataDir.slice(`--user-data-dir=${root}/`.length).split("/")[0] as string, Number(entry));
  }
  return found;
}

/**
 * True when the browser behind a CDP URL (with its lease's token) admits a DevTools client and
 * answers a command over it. The browser serves one client at a time: none may be connected.
 */
export async function answersCdp(cdpWsUrl: string): Promise<boolean> {
  const socket = new WebSocket(cdpWsUrl);
  const answered = await new Promise<boolean>((settled) => {
    socket.once("open", () => socket.send(JSON.stringify({ id: 1, method: "Browser.getVersion" })));
    socket.once("message", (data) => settled((JSON.parse(data.toString()) as { id?: number }).id === 1));
    // A refused upgrade, too, ends as an error.
    socket.once("error", () => settled(false));
    socket.once("close", () => settled(false));
    AbortSignal.timeout(5000).addEventListener("abort", () => settled(false));
  });
  socket.terminate();
  return answered;
}

/**
 * The answer to a DevTools WebSocket upgrade: 101 once open (the socket is then closed), else the
 * status of the refusal; "unreachable" when nothing listens any more.
 */
export function upgradeStatus(url: string): Promise<number | "unreachable"> {
  return new Promise((answered) => {
    const socket = new WebSocket(url);
    socket.once("open", () => {
      socket.close();
      answered(101);
    });
    socket.once("unexpected-response", (_request, response) => {
      answered(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once("error", () => answered("unreachable"));
  });
}

/** A one-page site on 127.0.0.1 for a pooled browser to load. */
export async function startTestSite(html: string): Promise<{ url: string; stop(): Promise<void> }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html" });
    response.end(html);
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    stop: () => new Promise((closed) => server.close(() => closed())),
  };
}

/** The page's content once the error page a refused navigation leads to has replaced it. */
export const settledContent = (page: Page) => eventually(() => page.content().catch(() => undefined), "the page to settle");

/**
 * A loopback site: `/ok…` answers "allowed" to any origin, `/redirect?to=` redirects there, any
 * other path is a page; `requests` counts what reached it.
 */
export async function startLoopbackSite(): Promise<{ origin: string; port: number; requests(): number; stop(): Promise<void> }> {
  let requests = 0;
  const server = createServer((request, response) => {
    requests += 1;
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/redirect") {
      response.writeHead(302, { location: url.searchParams.get("to") ?? "/ok" }).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/html", "access-control-allow-origin": "*" }).end(url.pathname.startsWith("/ok") ? "allowed" : "<p>a page</p>");
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests: () => requests,
    stop: () => {
      server.closeAllConnections();
      return new Promise((closed) => server.close(() => closed()));
    },
  };
}
