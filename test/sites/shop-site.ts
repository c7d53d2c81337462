import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { escapeHtml } from "./site-html.ts";
import { randomToken } from "./site-http.ts";

/**
 * A German shop written after Shopware's storefront, on 127.0.0.1: the home page links the customer
 * account only by the word "Anmelden", to `/konto/`, an address nothing marks as a login page; the
 * account page shows the login form to visitors and the account overview to a signed-in customer.
 * `dropSignedInPagesAfter(n)` answers the first `n` signed-in GETs of each session, then closes the
 * connection without an answer for the rest (a network error); null answers them all again.
 */
export interface ShopSite {
  url: string;
  user: { email: string; password: string };
  dropSignedInPagesAfter(count: number | null): void;
  stop(): Promise<void>;
}

const user = { email: "ada@example.com", password: "correct horse" };

export async function startShopSite(): Promise<ShopSite> {
  const sessions = new Map<string, number>();
  let dropAfter: number | null = null;
  const server = createServer((request, response) => {
    readBody(request).then((body) => {
      const path = new URL(request.url ?? "/", "http://shop.invalid").pathname;
      const token = /(?:^|;\s*)sw-session=([^;]+)/.exec(request.headers.cookie ?? "")?.[1] ?? "";
      const signedIn = sessions.has(token);
      const send = (status: number, html: string, headers: Record<string, string> = {}) => {
        response.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
        response.end(html);
      };
      if (request.method === "POST" && path === "/konto/") {
        const form = new URLSearchParams(body);
        if (form.get("email") !== user.email || form.get("password") !== user.password) return send(200, accountPage(false, "Ihre Zugangsdaten sind ungültig."));
        const fresh = randomToken();
        sessions.set(fresh, 0);
        return send(302, "", { location: "/konto/", "set-cookie": `sw-session=${fresh}; Path=/; HttpOnly; SameSite=Lax` });
      }
      if (request.method !== "GET") return send(405, "");
      if (signedIn) {
        const answered = sessions.get(token)!;
        if (dropAfter !== null && answered >= dropAfter) return response.destroy();
        sessions.set(token, answered + 1);
      }
      if (path === "/") return send(200, homePage(signedIn));
      if (path === "/konto/") return send(200, accountPage(signedIn));
      return send(404, "<!doctype html><title>Seite nicht gefunden</title><h1>Seite nicht gefunden</h1>");
    }, () => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    user,
    dropSignedInPagesAfter: (count) => {
      dropAfter = count;
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function layout(title: string, signedIn: boolean, main: string): string {
  const account = signedIn
    ? `<a class="header-account" href="/konto/">Mein Konto</a> <a class="header-logout" href="/konto/logout">Abmelden</a>`
    : `<a class="header-account" href="/konto/">Anmelden</a>`;
  return `<!doctype html><html lang="de"><head><meta charset="utf-8"><title>${escapeHtml(title)} | Tannenladen</title></head>
<body><header class="header-main"><a class="header-logo" href="/">Tannenladen</a><div class="header-actions">${account}</div></header>
<main class="content-main">${main}</main></body></html>`;
}

function homePage(signedIn: boolean): string {
  return layout("Startseite", signedIn, `<h1>Willkommen im Tannenladen</h1><p>Holzspielzeug aus dem Schwarzwald.</p>`);
}

function accountPage(signedIn: boolean, error = ""): string {
  if (signedIn) return layout("Übersicht", true, `<h1>Übersicht</h1><p class="account-welcome">Willkommen, <strong>${escapeHtml(user.email)}</strong></p>`);
  const alert = error ? `<div class="alert alert-danger" role="alert">${escapeHtml(error)}</div>` : "";
  return layout(
    "Kundenkonto",
    false,
    `<h1>Ich bin bereits Kunde</h1>${alert}<form class="login-form" action="/konto/" method="post">
<label for="loginMail">Ihre E-Mail-Adresse</label><input type="email" id="loginMail" name="email" autocomplete="email" required>
<label for="loginPassword">Ihr Passwort</label><input type="password" id="loginPassword" name="password" autocomplete="current-password" required>
<button type="submit" class="btn btn-primary">Anmelden</button></form>`,
  );
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => (body += chunk));
    request.on("end", () => resolve(body));
    request.on("error", reject);
  });
}
