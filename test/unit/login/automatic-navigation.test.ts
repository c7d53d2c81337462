import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginTarget } from "#shared/login/types.ts";

/**
 * Pages that move a browser on by themselves: a meta refresh to the login page, and the SAML-style
 * hand-off (a form of hidden values submitted on load) between the login and the site's session.
 */

let server: Server;
let base: string;
const sessions = new Set<string>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      const sid = /sid=(\w+)/.exec(request.headers.cookie ?? "")?.[1];
      const html = (body: string, head = "") => response.writeHead(200, { "content-type": "text/html" }).end(`<html><head>${head}</head>${body}</html>`);
      switch (`${request.method} ${request.url}`) {
        case "GET /start":
          return html("<body>Redirecting…</body>", '<meta http-equiv="refresh" content="0; url=/login">');
        case "GET /login":
          return html('<body><form method="post" action="/session"><input type="email" name="email"><input type="password" name="password"><button>Sign in</button></form></body>');
        case "POST /session":
          return form.get("password") === "pw"
            ? html('<body onload="document.forms[0].submit()"><form method="post" action="/acs"><input type="hidden" name="SAMLResponse" value="assertion-1"><noscript><button>Continue</button></noscript></form></body>')
            : html('<body><p class="error">Wrong password</p><form method="post" action="/session"><input type="email" name="email"><input type="password" name="password"></form></body>');
        case "POST /acs": {
          if (form.get("SAMLResponse") !== "assertion-1") return response.writeHead(400).end();
          const id = `s${sessions.size + 1}`;
          sessions.add(id);
          return response.writeHead(302, { location: "/home", "set-cookie": `sid=${id}; Path=/; HttpOnly` }).end();
        }
        case "GET /home":
          return sid && sessions.has(sid)
            ? html('<body><h1>Welcome back</h1><a href="/logout">Sign out</a></body>')
            : html("<body>Please sign in again.</body>", '<meta http-equiv="refresh" content="2;URL=\'/login\'">');
        default:
          return response.writeHead(404).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("pages that navigate by themselves", () => {
  const engine = createLoginEngine({ allowPrivateTargets: true });
  const target = (): LoginTarget => ({ domain: "127.0.0.1", loginUrl: `${base}/start`, allowedDomains: [] });

  it("follows a meta refresh to the login form, and the auto-submitted hand-off after it to the session", async () => {
    const first = await engine.start(target());
    expect(first).toMatchObject({ kind: "input", prompt: { fields: [{ id: "identifier" }, { id: "password" }] } });
    if (first.kind !== "input") return;

    const done = await engine.submit(target(), first.state, { field_values: { identifier: "ada@example.com", password: "pw" } });

    expect(done).toMatchObject({ kind: "success", postLoginUrl: `${base}/home` });
    if (done.kind !== "success") return;
    expect(done.session.cookies.map((cookie) => cookie.name)).toEqual(["sid"]);
    expect(await engine.probe(target(), done.session, done.postLoginUrl, done.evidence)).toEqual({ state: "logged_in" });

    sessions.clear();
    expect(await engine.probe(target(), done.session, done.postLoginUrl, done.evidence)).toEqual({ state: "logged_out", reason: "redirected to the login page /login" });
  });
});
