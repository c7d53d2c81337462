import { alertDanger, escapeHtml, field, page, postForm } from "./site-html.ts";
import { handlerClock, htmlReply, invalidCsrfReply, preSessions, randomToken, redirectReply, serveRoutes, type Exchange, type Route } from "./site-http.ts";

/**
 * Three apps whose answer to a correct password is easy to misjudge, one per path prefix, on 127.0.0.1:
 * - `desk`: a helpdesk whose signed-in dashboard has a search box in its header, a card "Last
 *   successful login / View login history", and a widget filter asking for a username; its sign-out
 *   is in a user menu that script draws only when opened, so the page as served shows none.
 * - `vault`: after a correct password it sets a pre-session cookie and sends the browser to a
 *   security check drawn on a canvas (no form, no text, no sign of a session) that never lets it
 *   through; that cookie opens nothing of the app, which asks to log in again.
 * - `chat`: a web chat client whose signed-in home, for a new user, is its own "Connect to a network"
 *   form: a name, a server, a port, a nick, a user name, a real name, the network's password and a
 *   choice of how to authenticate to it, and no sign-out control on the page.
 */

export const judgementApps = ["desk", "vault", "chat"] as const;
export type JudgementApp = (typeof judgementApps)[number];

export interface JudgementSites {
  url: string;
  user: { email: string; password: string };
  loginUrl(app: JudgementApp): string;
  /** The app's signed-in home: its dashboard, where a working session lands. */
  homeUrl(app: JudgementApp): string;
  stop(): Promise<void>;
}

const user = { email: "ada@example.com", password: "correct horse" };

export async function startJudgementSites(): Promise<JudgementSites> {
  const routes = new Map<string, Route>();
  const server = await serveRoutes(routes, handlerClock());
  const url = `http://127.0.0.1:${server.port}`;
  for (const [path, route] of [...deskRoutes(), ...vaultRoutes(), ...chatRoutes()]) routes.set(path, route);
  return {
    url,
    user,
    loginUrl: (app) => `${url}/${app}/login`,
    homeUrl: (app) => `${url}/${app}/`,
    stop: () => server.stop(),
  };
}

function accepts(exchange: Exchange): boolean {
  return exchange.form.get("email")?.trim().toLowerCase() === user.email && exchange.form.get("password") === user.password;
}

/**
 * `/<prefix>/login`: its form, and its POST, which on the right email and password sets `cookie` to a
 * new token kept in `tokens` and sends the browser to `then`. `signedIn` visitors are sent there at once.
 */
function loginRoute(brand: string, prefix: string, grant: { cookie: string; tokens: Set<string>; then: string }, signedIn: (exchange: Exchange) => boolean): Route {
  const visitors = preSessions(`${prefix}_visitor`, `/${prefix}`);
  return {
    GET: (exchange) => (signedIn(exchange) ? redirectReply(grant.then) : htmlReply(loginPage(brand, prefix, visitors.csrfToken(visitors.idOf(exchange))))),
    POST: (exchange) => {
      const visitor = visitors.verifiedId(exchange);
      if (!visitor) return invalidCsrfReply();
      if (!accepts(exchange)) return htmlReply(loginPage(brand, prefix, visitors.csrfToken(visitor), "Invalid email or password."), 401);
      const token = randomToken();
      grant.tokens.add(token);
      exchange.setCookie(grant.cookie, token, `/${prefix}`);
      return redirectReply(grant.then);
    },
  };
}

function loginPage(brand: string, prefix: string, csrfToken: string, error?: string): string {
  return page({
    brand,
    title: "Log in",
    main: `<h1>Log in to ${escapeHtml(brand)}</h1>
${alertDanger(error)}${postForm({
      action: `/${prefix}/login`,
      csrfToken,
      body: `${field({ id: "email", name: "email", label: "Email", type: "email", autocomplete: "username", autofocus: true })}
${field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password" })}`,
      submit: "Log in",
    })}`,
  });
}

function deskRoutes(): [string, Route][] {
  const sessions = new Set<string>();
  const signedIn = (exchange: Exchange) => sessions.has(exchange.cookies.get("desk_session") ?? "");
  const dashboard = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Dashboard · Helpdesk</title></head>
<body>
<header class="topbar">
  <a class="brand" href="/desk/">Helpdesk</a>
  <div class="topbar-search" role="search">
    <form action="/desk/" method="get"><input type="text" name="q" aria-label="Search tickets" placeholder="Search…"><button>Go</button></form>
  </div>
  <div class="user-menu"><button type="button" class="user-menu-toggle" aria-haspopup="menu" aria-expanded="false">${escapeHtml(user.email)}</button><div class="user-menu-items" role="menu"></div></div>
</header>
<main>
  <h1>Dashboard</h1>
  <section class="card last-login">
    <h2>Last successful login</h2>
    <p>27 Nov 2026, 16:04 from 127.0.0.1</p>
    <a href="/desk/login-history">View login history</a>
  </section>
  <section class="card tickets">
    <h2>Open tickets</h2>
    <ul><li><a href="/desk/tickets/1">Printer on fire</a></li><li><a href="/desk/tickets/2">VPN drops every hour</a></li></ul>
  </section>
  <section class="card widgets">
    <h2>Tickets by assignee</h2>
    <form class="widget-filter" action="/desk/" method="get">
      <label for="assignee">Assignee</label><input id="assignee" name="assignee" type="text" placeholder="Username">
      <button>Apply</button>
    </form>
  </section>
</main>
<script>
  const toggle = document.querySelector(".user-menu-toggle");
  toggle.addEventListener("click", () => {
    document.querySelector(".user-menu-items").innerHTML = '<a role="menuitem" href="/desk/profile">Profile</a><a role="menuitem" href="/desk/logout">Sign out</a>';
    toggle.setAttribute("aria-expanded", "true");
  });
</script>
</body>
</html>`;
  const signedInOnly = (body: () => string) => (exchange: Exchange) => (signedIn(exchange) ? htmlReply(body()) : redirectReply("/desk/login"));
  return [
    ["/desk/", { GET: signedInOnly(() => dashboard) }],
    [
      "/desk/login-history",
      { GET: signedInOnly(() => page({ brand: "Helpdesk", title: "Login history", main: "<h1>Login history</h1><p>27 Nov 2026, 16:04 from 127.0.0.1</p>" })) },
    ],
    ["/desk/login", loginRoute("Helpdesk", "desk", { cookie: "desk_session", tokens: sessions, then: "/desk/" }, signedIn)],
  ];
}

function vaultRoutes(): [string, Route][] {
  const pending = new Set<string>();
  const challenge = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Vault</title></head>
<body>
<canvas id="check" width="360" height="120"></canvas>
<script>
  const context = document.getElementById("check").getContext("2d");
  let dots = 0;
  setInterval(() => {
    context.clearRect(0, 0, 360, 120);
    context.font = "16px sans-serif";
    context.fillText("Security check" + ".".repeat(dots = (dots + 1) % 4), 20, 60);
  }, 500);
</script>
</body>
</html>`;
  return [
    // The app itself wants a session that only a passed check would give: no cookie of this site opens it.
    ["/vault/", { GET: () => redirectReply("/vault/login") }],
    ["/vault/check", { GET: (exchange) => (pending.has(exchange.cookies.get("vault_pre") ?? "") ? htmlReply(challenge) : redirectReply("/vault/login")) }],
    // A correct password starts only a pre-session, for the check.
    ["/vault/login", loginRoute("Vault", "vault", { cookie: "vault_pre", tokens: pending, then: "/vault/check" }, () => false)],
  ];
}

function chatRoutes(): [string, Route][] {
  const sessions = new Set<string>();
  const signedIn = (exchange: Exchange) => sessions.has(exchange.cookies.get("chat_session") ?? "");
  const connectForm = page({
    brand: "Chat",
    title: "Connect",
    main: `<h1>Connect to a network</h1>
<form action="/chat/networks" method="post">
  <fieldset><legend>Network settings</legend>
    ${field({ id: "name", name: "name", label: "Name", type: "text", autocomplete: "off" })}
    ${field({ id: "host", name: "host", label: "Server", type: "text", autocomplete: "off" })}
    ${field({ id: "port", name: "port", label: "Port", type: "text", inputmode: "numeric", autocomplete: "off" })}
    ${field({ id: "network-password", name: "password", label: "Password", type: "password", autocomplete: "off" })}
  </fieldset>
  <fieldset><legend>User preferences</legend>
    ${field({ id: "nick", name: "nick", label: "Nick", type: "text", autocomplete: "off" })}
    ${field({ id: "username", name: "username", label: "Username", type: "text", autocomplete: "off" })}
    ${field({ id: "realname", name: "realname", label: "Real name", type: "text", autocomplete: "off" })}
  </fieldset>
  <fieldset><legend>Authentication</legend>
    <label><input type="radio" name="sasl" value="" checked> No authentication</label>
    <label><input type="radio" name="sasl" value="plain"> Username + password (SASL PLAIN)</label>
  </fieldset>
  <button type="submit">Connect</button>
</form>`,
  });
  return [
    ["/chat/", { GET: (exchange) => (signedIn(exchange) ? htmlReply(connectForm) : redirectReply("/chat/login")) }],
    ["/chat/login", loginRoute("Chat", "chat", { cookie: "chat_session", tokens: sessions, then: "/chat/" }, signedIn)],
  ];
}
