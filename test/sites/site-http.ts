import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

/** The little HTTP framework the test sites share: routes, form bodies, cookies, CSRF and a handler clock. */

export interface Exchange {
  method: string;
  path: string;
  query: URLSearchParams;
  form: URLSearchParams;
  cookies: Map<string, string>;
  setCookie(name: string, value: string, path: string): void;
  clearCookie(name: string, path: string): void;
}

export interface Reply {
  status: number;
  /** Bytes as they go on the wire: a compressed page is already encoded. */
  body: string | Buffer;
  headers?: Record<string, string>;
}

export type Handler = (exchange: Exchange) => Reply;
export type Route = Partial<Record<"GET" | "POST", Handler>>;

const maxFormBytes = 64 * 1024;

export function htmlReply(body: string, status = 200): Reply {
  return { status, body, headers: { "content-type": "text/html; charset=utf-8" } };
}

export function textReply(body: string, status = 200): Reply {
  return { status, body, headers: { "content-type": "text/plain; charset=utf-8" } };
}

export function redirectReply(location: string): Reply {
  return { status: 302, body: "", headers: { location } };
}

/** Milliseconds spent inside handlers, so a benchmark can subtract the site's own work from a login's time. */
export function handlerClock() {
  let totalMs = 0;
  return {
    add: (ms: number) => void (totalMs += ms),
    totalMs: () => totalMs,
    reset: () => void (totalMs = 0),
  };
}
export type HandlerClock = ReturnType<typeof handlerClock>;

/**
 * A pre-session cookie identifies a visitor before login; the form token is an HMAC of it, so a POST
 * must carry both the cookie and the token rendered for that cookie.
 */
export function preSessions(cookieName: string, cookiePath: string) {
  const key = randomBytes(32);
  const tokenFor = (id: string) => createHmac("sha256", key).update(id).digest("base64url");
  return {
    /** The visitor's pre-session id, starting one (and setting its cookie) on the first visit. */
    idOf(exchange: Exchange): string {
      const existing = exchange.cookies.get(cookieName);
      if (existing) return existing;
      const id = randomToken();
      exchange.setCookie(cookieName, id, cookiePath);
      exchange.cookies.set(cookieName, id);
      return id;
    },
    csrfToken: tokenFor,
    /** The pre-session id of a POST whose `_csrf` field matches its cookie, otherwise undefined. */
    verifiedId(exchange: Exchange): string | undefined {
      const id = exchange.cookies.get(cookieName);
      const sent = Buffer.from(exchange.form.get("_csrf") ?? "");
      if (!id) return undefined;
      const expected = Buffer.from(tokenFor(id));
      return sent.length === expected.length && timingSafeEqual(sent, expected) ? id : undefined;
    },
  };
}
export type PreSessions = ReturnType<typeof preSessions>;

export const invalidCsrfReply = (): Reply => textReply("Invalid CSRF token", 403);

export function randomToken(): string {
  return randomBytes(24).toString("base64url");
}

/** Serves `routes` on 127.0.0.1 at a free port; every handler's time goes to `clock`. */
export async function serveRoutes(routes: Map<string, Route>, clock: HandlerClock) {
  const server = createServer((request, response) => {
    readForm(request).then(
      (form) => {
        const startedAt = performance.now();
        const setCookies: string[] = [];
        const url = new URL(request.url ?? "/", "http://site.invalid");
        const exchange: Exchange = {
          method: request.method ?? "GET",
          path: url.pathname,
          query: url.searchParams,
          form: new URLSearchParams(form ?? ""),
          cookies: parseCookies(request.headers.cookie),
          setCookie: (name, value, path) => setCookies.push(`${name}=${value}; Path=${path}; HttpOnly; SameSite=Lax`),
          clearCookie: (name, path) => setCookies.push(`${name}=; Path=${path}; Max-Age=0; HttpOnly; SameSite=Lax`),
        };
        const reply = form === undefined ? textReply(`Request body is larger than ${maxFormBytes} bytes`, 413) : safeDispatch(routes, exchange);
        response.writeHead(reply.status, { ...reply.headers, ...(setCookies.length ? { "set-cookie": setCookies } : {}) });
        response.end(reply.body);
        clock.add(performance.now() - startedAt);
      },
      () => response.destroy(),
    );
  });
  return listenOnLoopback(server);
}

/** Starts `server` on 127.0.0.1 at a free port; `stop` also ends the connections it keeps open. */
export async function listenOnLoopback(server: Server): Promise<{ port: number; stop(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** A handler bug answers 500 and shows in the test output instead of crashing the test process. */
function safeDispatch(routes: Map<string, Route>, exchange: Exchange): Reply {
  try {
    return dispatch(routes, exchange);
  } catch (error) {
    console.error(`test site: ${exchange.method} ${exchange.path} failed`, error);
    return textReply("Internal Server Error", 500);
  }
}

function dispatch(routes: Map<string, Route>, exchange: Exchange): Reply {
  const route = routes.get(exchange.path);
  if (!route) return htmlReply("<!doctype html><title>Not found</title><h1>Page not found</h1>", 404);
  const handler = route[exchange.method as keyof Route];
  if (!handler) {
    const reply = textReply("Method Not Allowed", 405);
    return { ...reply, headers: { ...reply.headers, allow: Object.keys(route).join(", ") } };
  }
  return handler(exchange);
}

/** The body as text, or undefined when it is over the limit (read to the end anyway, so the 413 can be sent). */
function readForm(request: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxFormBytes) chunks.push(chunk);
    });
    request.on("end", () => resolve(size <= maxFormBytes ? Buffer.concat(chunks).toString("utf8") : undefined));
    request.on("error", reject);
  });
}

function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const pair of header?.split(";") ?? []) {
    const separator = pair.indexOf("=");
    if (separator > 0) cookies.set(pair.slice(0, separator).trim(), pair.slice(separator + 1).trim());
  }
  return cookies;
}
