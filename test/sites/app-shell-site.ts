import { escapeHtml } from "./site-html.ts";
import { handlerClock, htmlReply, randomToken, redirectReply, serveRoutes, textReply, type Exchange, type Route } from "./site-http.ts";

/**
 * Two apps whose signed-in pages one engine cannot tell from signed-out ones, on 127.0.0.1:
 * - the shell at `/`: a single-page app whose HTML is the same bytes with and without a session; its
 *   script asks `/api/me` (200 with the user's name for a live session cookie, 401 otherwise) and
 *   draws the dashboard (the name and "Sign out") or a sign-in form. A plain server-rendered form at
 *   `/login` signs in, so the HTTP engine logs in and lands on the shell.
 * - `/classic/`: a server-rendered page (`/classic/home`: the name and "Sign out" for a session, a
 *   "Sign in" link without) whose script replaces it with the same loading screen for everyone, and
 *   whose sign-in form (`/classic/login`) is drawn by script, so only the browser logs in there.
 * `endAllSessions()` ends every session on the server, leaving the visitors' cookies as they are.
 */

export interface AppShellSite {
  url: string;
  user: { email: string; name: string; password: string };
  /** The shell's sign-in form, served as HTML. */
  loginUrl: string;
  /** The classic app's sign-in page, drawn by script. */
  classicLoginUrl: string;
  endAllSessions(): void;
  /** Successful sign-ins so far. */
  logins(): number;
  stop(): Promise<void>;
}

const user = { email: "ada@example.com", name: "Ada Lovelace", password: "correct horse battery" };
const sessionCookie = "orbit_session";

/** The same bytes for every visitor: whether there is a session is the script's to find out. */
const shell = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Orbit</title></head>
<body>
<div id="app">Loading…</div>
<script>
(async () => {
  const app = document.getElementById("app");
  const me = await fetch("/api/me");
  if (me.ok) {
    const account = await me.json();
    app.innerHTML = '<header class="topbar"><span class="account">Signed in as <b id="who"></b></span> <button type="button" id="sign-out">Sign out</button></header>' +
      '<main><h1>Dashboard</h1><p>Your projects</p></main>';
    document.getElementById("who").textContent = account.name;
    document.getElementById("sign-out").addEventListener("click", async () => {
      await fetch("/api/logout", { method: "POST" });
      location.reload();
    });
  } else {
    app.innerHTML = '<main><h1>Sign in to Orbit</h1><form method="post" action="/login">' +
      '<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username">' +
      '<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">' +
      '<button type="submit">Sign in</button></form></main>';
  }
})();
</script>
</body>
</html>
`;

function loginPage(error?: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in · Orbit</title></head>
<body><main><h1>Sign in to Orbit</h1>
${error ? `<div class="alert" role="alert">${escapeHtml(error)}</div>` : ""}
<form method="post" action="/login">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form></main></body>
</html>
`;
}

const classicLogin = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in · Ledger</title></head>
<body><div id="root"></div>
<script>
const root = document.getElementById("root");
function form(error) {
  root.innerHTML = '<main><h1>Sign in to Ledger</h1>' + (error ? '<div role="alert">' + error + '</div>' : '') +
    '<div class="card"><label>Email <input id="em" type="email" autocomplete="username"></label>' +
    '<label>Password <input id="pw" type="password" autocomplete="current-password"></label>' +
    '<button type="button" id="go">Sign in</button></div></main>';
  document.getElementById("go").addEventListener("click", async () => {
    const body = new URLSearchParams({ email: document.getElementById("em").value, password: document.getElementById("pw").value });
    const answer = await fetch("/classic/api/login", { method: "POST", body });
    if (answer.ok) location.assign("/classic/home");
    else form("Incorrect email or password.");
  });
}
form(null);
</script>
</body>
</html>
`;

function classicHome(name: string | null): string {
  const header = name
    ? `<span class="account">Signed in as <b>${escapeHtml(name)}</b></span> <a href="/classic/logout">Sign out</a>`
    : `<a href="/classic/login">Sign in</a>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Ledger</title></head>
<body><header class="topbar">${header}</header>
<main><h1>Ledger</h1><p>Accounts and reports.</p></main>
<script>document.body.innerHTML = '<div id="app" class="splash">Loading your workspace…</div>';</script>
</body>
</html>
`;
}

export async function startAppShellSite(): Promise<AppShellSite> {
  const sessions = new Set<string>();
  let logins = 0;
  const accepts = (form: URLSearchParams) => form.get("email")?.trim().toLowerCase() === user.email && form.get("password") === user.password;
  const signIn = (exchange: Exchange) => {
    const token = randomToken();
    sessions.add(token);
    logins++;
    exchange.setCookie(sessionCookie, token, "/");
  };
  const signedIn = (exchange: Exchange) => sessions.has(exchange.cookies.get(sessionCookie) ?? "");
  const signOut = (exchange: Exchange) => {
    sessions.delete(exchange.cookies.get(sessionCookie) ?? "");
    exchange.clearCookie(sessionCookie, "/");
  };

  const routes = new Map<string, Route>([
    ["/", { GET: () => htmlReply(shell) }],
    [
      "/login",
      {
        GET: () => htmlReply(loginPage()),
        POST: (exchange) => {
          if (!accepts(exchange.form)) return htmlReply(loginPage("Incorrect email or password."), 401);
          signIn(exchange);
          return redirectReply("/");
        },
      },
    ],
    [
      "/api/me",
      {
        GET: (exchange) =>
          signedIn(exchange)
            ? { status: 200, body: JSON.stringify({ name: user.name, email: user.email }), headers: { "content-type": "application/json" } }
            : { status: 401, body: JSON.stringify({ error: "unauthorized" }), headers: { "content-type": "application/json" } },
      },
    ],
    [
      "/api/logout",
      {
        POST: (exchange) => {
          signOut(exchange);
          return textReply("", 204);
        },
      },
    ],
    ["/classic/login", { GET: () => htmlReply(classicLogin) }],
    [
      "/classic/api/login",
      {
        POST: (exchange) => {
          if (!accepts(exchange.form)) return textReply("Incorrect email or password.", 401);
          signIn(exchange);
          return textReply("", 204);
        },
      },
    ],
    ["/classic/home", { GET: (exchange) => htmlReply(classicHome(signedIn(exchange) ? user.name : null)) }],
    [
      "/classic/logout",
      {
        GET: (exchange) => {
          signOut(exchange);
          return redirectReply("/classic/home");
        },
      },
    ],
  ]);
  const server = await serveRoutes(routes, handlerClock());
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    user,
    loginUrl: `${url}/login`,
    classicLoginUrl: `${url}/classic/login`,
    endAllSessions: () => sessions.clear(),
    logins: () => logins,
    stop: () => server.stop(),
  };
}
