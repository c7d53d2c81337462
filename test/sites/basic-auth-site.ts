import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { listenOnLoopback, randomToken } from "./site-http.ts";

/**
 * An admin panel that asks for its password with HTTP Basic authentication, as Syncthing, routers
 * and apps behind a reverse proxy do, on 127.0.0.1: a visitor without a session gets 401 and a
 * `WWW-Authenticate: Basic` challenge (the browser's own prompt); the right user name and password
 * set a session cookie, which alone opens the panel from then on (a signed-in page with a sign-out
 * link); a wrong password gets 401 again, with a page that says so.
 *
 * At `noCookieUrl` the same panel sets no cookie: the password has to come with every request.
 * At `elsewhereUrl` the right password is answered with a redirect to another origin (a second
 * listener), which records any `Authorization` header sent to it.
 */

export interface BasicAuthSite {
  user: { name: string; password: string };
  url: string;
  noCookieUrl: string;
  elsewhereUrl: string;
  sessionCookie: string;
  /** The `Authorization` header of each request the other origin received, null for none. */
  authorizationsElsewhere: Array<string | null>;
  /** Ends every session on the server, as a sign-out elsewhere or a restart does. */
  endSessions(): void;
  stop(): Promise<void>;
}

const realm = "Acme Router";
const sessionCookie = "sessionid-acme";

function signedInPage(): string {
  return `<!doctype html><html><head><title>Acme Router</title></head><body>
<nav><span class="user">admin</span> <a href="/logout">Sign out</a></nav>
<main><h1>Status</h1><p>All ports up. Firmware 4.2.1.</p></main></body></html>`;
}

export async function startBasicAuthSite(): Promise<BasicAuthSite> {
  const user = { name: "admin", password: `pw-${randomToken()}` };
  const sessions = new Set<string>();
  const authorizationsElsewhere: Array<string | null> = [];

  const elsewhere = await listenOnLoopback(
    createServer((request, response) => {
      authorizationsElsewhere.push(request.headers.authorization ?? null);
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(signedInPage());
    }),
  );

  function challenge(response: ServerResponse, attempted: boolean): void {
    response.writeHead(401, { "www-authenticate": `Basic realm="${realm}", charset="UTF-8"`, "content-type": attempted ? "text/html; charset=utf-8" : "text/plain; charset=utf-8" });
    response.end(attempted ? `<!doctype html><title>401 Unauthorized</title><div class="alert alert-danger" role="alert">Invalid user name or password</div>` : "Not Authorized\n");
  }

  /** The credentials of an `Authorization: Basic` header: null when absent, "wrong" or "right". */
  function credentialsOf(request: IncomingMessage): "right" | "wrong" | null {
    const header = request.headers.authorization;
    if (!header) return null;
    const [scheme, encoded = ""] = header.split(" ");
    if (scheme?.toLowerCase() !== "basic") return "wrong";
    return Buffer.from(encoded, "base64").toString("utf8") === `${user.name}:${user.password}` ? "right" : "wrong";
  }

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://site.invalid").pathname;
    const cookie = /(?:^|;\s*)sessionid-acme=([^;]+)/.exec(request.headers.cookie ?? "")?.[1];
    if (path === "/logout") {
      if (cookie) sessions.delete(cookie);
      response.writeHead(302, { location: "/", "set-cookie": `${sessionCookie}=; Path=/; Max-Age=0` }).end();
      return;
    }
    const credentials = credentialsOf(request);
    if (path === "/" && cookie && sessions.has(cookie)) {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(signedInPage());
      return;
    }
    if (credentials !== "right") {
      challenge(response, path !== "/plain" && credentials === "wrong");
      return;
    }
    if (path === "/elsewhere") {
      response.writeHead(302, { location: `http://127.0.0.1:${elsewhere.port}/status` }).end();
      return;
    }
    const headers: Record<string, string> = { "content-type": "text/html; charset=utf-8" };
    if (path === "/") {
      const id = randomToken();
      sessions.add(id);
      headers["set-cookie"] = `${sessionCookie}=${id}; Path=/; HttpOnly; SameSite=Lax`;
    }
    response.writeHead(200, headers).end(signedInPage());
  });
  const listening = await listenOnLoopback(server);
  const origin = `http://127.0.0.1:${listening.port}`;

  return {
    user,
    url: `${origin}/`,
    noCookieUrl: `${origin}/plain`,
    elsewhereUrl: `${origin}/elsewhere`,
    sessionCookie,
    authorizationsElsewhere,
    endSessions: () => sessions.clear(),
    stop: async () => {
      await listening.stop();
      await elsewhere.stop();
    },
  };
}
