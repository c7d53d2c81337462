import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { totpMatches } from "#shared/secrets/totp.ts";

/**
 * The website `npm start` serves for the quick start to log in to: email and password, then a code
 * from an authenticator app, then a page that says who is signed in. Plain HTML forms, sessions in
 * memory, 127.0.0.1 only.
 */

/**
 * Fixed and printed at start so the quick start can be pasted as it is: the site guards nothing and
 * only this machine can reach it.
 */
export const demoUser = {
  name: "Dana Demo",
  email: "dana@example.com",
  password: "demo-password",
  totpSecret: "DEMOSITEDEMOSITEDEMOSITEDEMOSITE",
} as const;

export interface DemoSite {
  /** http://127.0.0.1:<port>; the login page is `/login`, the signed-in page `/whoami`. */
  url: string;
  stop(): Promise<void>;
}

interface Reply {
  status: number;
  html?: string;
  location?: string;
  cookies?: string[];
  /** Closes the connection after the answer, as for a request that was not read to its end. */
  close?: boolean;
}

const pendingCookie = "demo_pending";
const sessionCookie = "demo_session";
const maxFormBytes = 16 * 1024;
/** Of visitors owing a code, and of signed-in ones, the newest this many are kept: a flood of sign-ins cannot grow memory without end. */
const maxVisitors = 100;

/** Serves the demo site on 127.0.0.1:`port` (0 picks a free port); rejects when the port is taken. */
export async function startDemoSite(port: number): Promise<DemoSite> {
  /** Visitors whose password was right and who still owe a code. */
  const awaitingCode = newestTokens(maxVisitors);
  const sessions = newestTokens(maxVisitors);

  function route(method: string, path: string, cookie: (name: string) => string | undefined, form: URLSearchParams): Reply {
    const session = cookie(sessionCookie) ?? "";
    const pending = cookie(pendingCookie) ?? "";
    const signedIn = sessions.has(session);
    if (path === "/") return redirect("/whoami");
    if (path === "/login" && method === "GET") return signedIn ? redirect("/whoami") : passwordPage();
    if (path === "/login" && method === "POST") {
      const rightUser = form.get("email")?.trim().toLowerCase() === demoUser.email && form.get("password") === demoUser.password;
      if (!rightUser) return passwordPage("Incorrect email or password.");
      const token = randomToken();
      awaitingCode.add(token);
      return redirect("/login/code", [setCookie(pendingCookie, token)]);
    }
    if (path === "/login/code" && method === "GET") return awaitingCode.has(pending) ? codePage() : redirect("/login");
    if (path === "/login/code" && method === "POST") {
      if (!awaitingCode.has(pending)) return redirect("/login");
      if (!totpMatches(demoUser.totpSecret, form.get("code") ?? "")) return codePage("That code is not right. Enter the current code from your authenticator app.");
      awaitingCode.delete(pending);
      const token = randomToken();
      sessions.add(token);
      return redirect("/whoami", [setCookie(sessionCookie, token), clearCookie(pendingCookie)]);
    }
    if (path === "/whoami" && method === "GET") return signedIn ? whoAmIPage() : redirect("/login");
    if (path === "/logout" && method === "GET") {
      sessions.delete(session);
      return redirect("/login", [clearCookie(sessionCookie)]);
    }
    return { status: 404, html: page("Not found", "<h1>Page not found</h1>") };
  }

  const server = createServer((request, response) => {
    const url = URL.parse(request.url ?? "/", "http://demo.invalid");
    // Another Host is a page elsewhere that had its name resolve to 127.0.0.1 (DNS rebinding).
    if (!url || !ownHosts.has(request.headers.host ?? "")) {
      send(response, { status: 400, html: page("Bad request", "<h1>Bad request</h1>"), close: true });
      return;
    }
    readForm(request).then(
      (form) => {
        const cookie = (name: string) => cookieValue(request.headers.cookie, name);
        send(response, route(request.method ?? "GET", url.pathname, cookie, form));
      },
      // Over the limit: close the connection rather than read the rest. The response, not the
      // request once iterated, still holds the socket.
      () => response.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const ownHosts = new Set([`127.0.0.1:${address.port}`, `localhost:${address.port}`]);
  return {
    url: `http://127.0.0.1:${address.port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function passwordPage(error?: string): Reply {
  return {
    status: 200,
    html: page(
      "Sign in",
      `<h1>Sign in to the demo site</h1>
${alert(error)}<form method="post" action="/login">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>`,
    ),
  };
}

function codePage(error?: string): Reply {
  return {
    status: 200,
    html: page(
      "Two-step verification",
      `<h1>Two-step verification</h1>
<p>Enter the 6-digit code from your authenticator app.</p>
${alert(error)}<form method="post" action="/login/code">
  <label for="code">Code from your authenticator app</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" maxlength="6" required>
  <button type="submit">Verify</button>
</form>`,
    ),
  };
}

function whoAmIPage(): Reply {
  return {
    status: 200,
    html: page("Who am I", `<h1>Signed in as ${demoUser.name}</h1>\n<p>${demoUser.email}</p>\n<p><a href="/logout">Sign out</a></p>`),
  };
}

const alert = (message: string | undefined) => (message ? `<p class="error" role="alert">${message}</p>\n` : "");

function page(title: string, main: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${title} · Demo site</title></head>
<body>
<main>
${main}
</main>
</body>
</html>
`;
}

function redirect(location: string, cookies: string[] = []): Reply {
  return { status: 302, location, cookies };
}

function setCookie(name: string, value: string): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Lax`;
}

function clearCookie(name: string): string {
  return `${name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax`;
}

function randomToken(): string {
  return randomBytes(24).toString("base64url");
}

function send(response: ServerResponse, reply: Reply): void {
  response.writeHead(reply.status, {
    ...(reply.html === undefined ? {} : { "content-type": "text/html; charset=utf-8" }),
    ...(reply.location === undefined ? {} : { location: reply.location }),
    ...(reply.cookies?.length ? { "set-cookie": reply.cookies } : {}),
    ...(reply.close ? { connection: "close" } : {}),
  });
  response.end(reply.html ?? "");
}

/** The form fields of a POST body; rejects as soon as the body is over the limit, declared or sent. */
async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  if (Number(request.headers["content-length"] ?? 0) > maxFormBytes) throw new Error("form too large");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > maxFormBytes) throw new Error("form too large");
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** A set of tokens that keeps only the `limit` newest. */
function newestTokens(limit: number) {
  const tokens = new Set<string>();
  return {
    has: (token: string) => tokens.has(token),
    delete: (token: string) => tokens.delete(token),
    add(token: string) {
      tokens.add(token);
      // A Set iterates in insertion order: its first token is the oldest.
      for (const oldest of tokens) {
        if (tokens.size <= limit) break;
        tokens.delete(oldest);
      }
    },
  };
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of header?.split(";") ?? []) {
    const [key, ...value] = pair.trim().split("=");
    if (key === name) return value.join("=");
  }
  return undefined;
}
