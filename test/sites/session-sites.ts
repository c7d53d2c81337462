import { escapeHtml, field, postForm } from "./site-html.ts";
import { handlerClock, htmlReply, invalidCsrfReply, preSessions, randomToken, redirectReply, serveRoutes, type Exchange, type Route } from "./site-http.ts";

/**
 * Sites whose signed-out pages are ordinary 200s, as the health checks meet them on real installs;
 * each written after a well-known application's markup, one per path prefix, on 127.0.0.1:
 * - `wiki`: a MediaWiki-like wiki whose main page anyone may read; only the personal tools differ.
 * - `team`: a private wiki answering a 200 "Login required" page with nothing but a "log in" link; a
 *   fresh login's welcome banner is kept by a cookie the page after it deletes.
 * - `forum`: a phpBB-like board; a session ended on the server leaves its cookie behind, and the
 *   board answers it with a fresh guest session under the same cookie names.
 * - `docs`: documentation whose pages look the same signed in and out (the login only gates downloads).
 * `endSessions(shape)` ends every session of a shape on the server, leaving the visitors' cookies as they are;
 * `holdPages(shape, status)` puts a rate limiter (429) in front of a shape, or moves its pages away (404).
 */

export const sessionShapes = ["wiki", "team", "forum", "docs"] as const;
export type SessionShape = (typeof sessionShapes)[number];

export interface SessionSites {
  url: string;
  /** The one account, the same on every shape: `wiki` and `forum` sign in by username, the others by email. */
  user: { username: string; email: string; password: string };
  /** What the user types into the identifier field of `shape`. */
  identifierFor(shape: SessionShape): string;
  /** Where a login on `shape` starts. */
  loginUrl(shape: SessionShape): string;
  endSessions(shape: SessionShape): void;
  /** While set, every GET of `shape` answers `status`: 429 with a Retry-After, or 404; null lets pages through again. */
  holdPages(shape: SessionShape, status: 429 | 404 | null): void;
  /** Successful logins of `shape`. */
  logins(shape: SessionShape): number;
  stop(): Promise<void>;
}

const user = { username: "Ada", email: "ada@example.com", password: "correct horse" };

export async function startSessionSites(): Promise<SessionSites> {
  const routes = new Map<string, Route>();
  const server = await serveRoutes(routes, handlerClock());
  const url = `http://127.0.0.1:${server.port}`;
  const sessions = new Map<string, SessionShape>();
  const logins = new Map<SessionShape, number>();
  const signIn = (shape: SessionShape) => {
    const token = randomToken();
    sessions.set(token, shape);
    logins.set(shape, (logins.get(shape) ?? 0) + 1);
    return token;
  };
  const signedIn = (exchange: Exchange, shape: SessionShape, cookie: string) => sessions.get(exchange.cookies.get(cookie) ?? "") === shape;
  const identifierFor = (shape: SessionShape) => (shape === "wiki" || shape === "forum" ? user.username : user.email);
  const accepts = (shape: SessionShape, identifier: string | null, password: string | null) =>
    identifier?.trim().toLowerCase() === identifierFor(shape).toLowerCase() && password === user.password;

  const held = new Map<SessionShape, 429 | 404>();
  const heldReply = (status: 429 | 404) =>
    status === 429
      ? { ...htmlReply("<!doctype html><title>Too Many Requests</title><h1>Too Many Requests</h1>", 429), headers: { "content-type": "text/html", "retry-after": "120" } }
      : htmlReply("<!doctype html><title>404 Not Found</title><h1>Not Found</h1><p>The requested URL was not found on this server.</p>", 404);
  const shapes: [SessionShape, [string, Route][]][] = [
    ["wiki", wikiRoutes()],
    ["team", teamRoutes()],
    ["forum", forumRoutes()],
    ["docs", docsRoutes()],
  ];
  for (const [shape, shapeRoutes] of shapes) {
    for (const [path, route] of shapeRoutes) {
      const get = route.GET;
      routes.set(path, get ? { ...route, GET: (exchange) => (held.has(shape) ? heldReply(held.get(shape)!) : get(exchange)) } : route);
    }
  }

  /** MediaWiki's shapes: `/wiki/<title>` views, `/w/index.php?title=Special:...` actions, personal tools in `#p-personal`. */
  function wikiRoutes(): [string, Route][] {
    const visitors = preSessions("pinewiki_loginsession", "/");
    const personalTools = (exchange: Exchange) =>
      signedIn(exchange, "wiki", "pinewiki_session")
        ? `<li id="pt-userpage" class="mw-list-item"><a href="/wiki/User:${user.username}" title="Your user page">${user.username}</a></li>
<li id="pt-mytalk" class="mw-list-item"><a href="/wiki/User_talk:${user.username}" title="Your talk page">Talk</a></li>
<li id="pt-preferences" class="mw-list-item"><a href="/wiki/Special:Preferences" title="Your preferences">Preferences</a></li>
<li id="pt-logout" class="mw-list-item"><a href="/w/index.php?title=Special:UserLogout&amp;returnto=Main+Page" title="Log out">Log out</a></li>`
        : `<li id="pt-anonuserpage" class="mw-list-item">Not logged in</li>
<li id="pt-createaccount" class="mw-list-item"><a href="/w/index.php?title=Special:CreateAccount&amp;returnto=Main+Page" title="You are encouraged to create an account">Create account</a></li>
<li id="pt-login" class="mw-list-item"><a href="/w/index.php?title=Special:UserLogin&amp;returnto=Main+Page" title="You are encouraged to log in" accesskey="o">Log in</a></li>`;
    const skin = (exchange: Exchange, title: string, content: string) =>
      htmlReply(`<!DOCTYPE html>
<html class="client-nojs" lang="en" dir="ltr">
<head><meta charset="UTF-8"><title>${escapeHtml(title)} - Pinewiki</title></head>
<body class="mediawiki ltr skin-vector">
<div id="mw-head"><nav id="p-personal" class="vector-menu" aria-labelledby="p-personal-label"><h3 id="p-personal-label">Personal tools</h3><ul>
${personalTools(exchange)}
</ul></nav></div>
<div id="content" class="mw-body" role="main"><h1 id="firstHeading" class="firstHeading">${escapeHtml(title)}</h1>
<div id="bodyContent" class="vector-body">${content}</div></div>
<div id="mw-navigation"><a href="/wiki/Main_Page">Main page</a> <a href="/wiki/Special:RecentChanges">Recent changes</a></div>
<footer id="footer"><ul><li id="footer-info-lastmod">This page was last edited on 2 March 2026.</li></ul></footer>
</body></html>`);
    const loginForm = (exchange: Exchange, error?: string) =>
      skin(
        exchange,
        "Log in",
        `${error ? `<div class="cdx-message cdx-message--error"><span>${escapeHtml(error)}</span></div>` : ""}
<form name="userlogin" class="mw-htmlform" method="post" action="/w/index.php?title=Special:UserLogin&amp;returnto=Main+Page">
<label for="wpName1">Username</label><input id="wpName1" name="wpName" size="20" autocomplete="username" placeholder="Enter your username">
<label for="wpPassword1">Password</label><input id="wpPassword1" name="wpPassword" size="20" type="password" autocomplete="current-password" placeholder="Enter your password">
<input type="hidden" name="wpLoginToken" value="${escapeHtml(visitors.csrfToken(visitors.idOf(exchange)))}+\\">
<button id="wpLoginAttempt" name="wploginattempt" type="submit" value="Log in" class="cdx-button">Log in</button>
</form>`,
      );
    return [
      [
        "/wiki/Main_Page",
        { GET: (exchange) => skin(exchange, "Main Page", "<p>Welcome to Pinewiki, the free encyclopedia about pine trees that anyone can edit.</p>") },
      ],
      [
        "/w/index.php",
        {
          GET: (exchange) => {
            const title = exchange.query.get("title");
            if (title === "Special:UserLogout") {
              sessions.delete(exchange.cookies.get("pinewiki_session") ?? "");
              return redirectReply("/wiki/Main_Page");
            }
            return title === "Special:UserLogin" ? loginForm(exchange) : redirectReply("/wiki/Main_Page");
          },
          POST: (exchange) => {
            const id = exchange.cookies.get("pinewiki_loginsession");
            const token = (exchange.form.get("wpLoginToken") ?? "").replace(/\+\\$/, "");
            if (!id || token !== visitors.csrfToken(id)) return invalidCsrfReply();
            if (!accepts("wiki", exchange.form.get("wpName"), exchange.form.get("wpPassword"))) {
              return loginForm(exchange, "Incorrect username or password entered. Please try again.");
            }
            exchange.setCookie("pinewiki_session", signIn("wiki"), "/");
            exchange.setCookie("pinewikiUserName", user.username, "/");
            return redirectReply(`/wiki/${exchange.query.get("returnto")?.replace(/ /g, "_") ?? "Main_Page"}`);
          },
        },
      ],
    ];
  }

  /** A private wiki: every page needs a session, and without one the page answers 200 with a link to the login. */
  function teamRoutes(): [string, Route][] {
    const visitors = preSessions("team_presession", "/team");
    const layout = (title: string, header: string, main: string) =>
      htmlReply(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} - Team Wiki</title></head>
<body><header class="site-header"><a class="logo" href="/team/">Team Wiki</a>${header}</header>
<main class="content">${main}</main></body></html>`);
    const loginPage = (exchange: Exchange, error?: string) =>
      layout(
        "Log in",
        "",
        `<h1>Log in</h1>${error ? `<div class="error">${escapeHtml(error)}</div>` : ""}
${postForm({
  action: "/team/login",
  csrfToken: visitors.csrfToken(visitors.idOf(exchange)),
  submit: "Log in",
  body: `${field({ id: "email", name: "email", label: "Email", type: "email", autocomplete: "username" })}
${field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password" })}`,
})}`,
      );
    return [
      [
        "/team/",
        {
          GET: (exchange) => {
            if (!signedIn(exchange, "team", "team_session")) {
              return layout("Login required", "", `<h1>Login required</h1><p>Please <a href="/team/login?return=%2Fteam%2F">log in</a> to view this page.</p>`);
            }
            // The banner shows on the first page after a login; the page after it deletes the cookie.
            const welcome = exchange.cookies.get("team_welcome");
            if (welcome === "new") exchange.setCookie("team_welcome", "shown", "/team");
            if (welcome === "shown") exchange.clearCookie("team_welcome", "/team");
            return layout(
              "Home",
              `<div class="user-menu"><span class="user-name">${escapeHtml(user.email)}</span>
<form action="/team/logout" method="post" class="logout-form"><input type="hidden" name="_csrf" value="${escapeHtml(visitors.csrfToken(visitors.idOf(exchange)))}"><button type="submit">Log out</button></form></div>`,
              `${welcome === "new" ? `<div class="banner">Welcome back!</div>` : ""}<h1>Home</h1><p>Runbooks, on-call rota and the release checklist.</p>`,
            );
          },
        },
      ],
      [
        "/team/login",
        {
          GET: (exchange) => loginPage(exchange),
          POST: (exchange) => {
            if (!visitors.verifiedId(exchange)) return invalidCsrfReply();
            if (!accepts("team", exchange.form.get("email"), exchange.form.get("password"))) return loginPage(exchange, "Wrong email or password.");
            exchange.setCookie("team_session", signIn("team"), "/team");
            exchange.setCookie("team_welcome", "new", "/team");
            return redirectReply("/team/");
          },
        },
      ],
      [
        "/team/logout",
        {
          POST: (exchange) => {
            sessions.delete(exchange.cookies.get("team_session") ?? "");
            exchange.clearCookie("team_session", "/team");
            return redirectReply("/team/");
          },
        },
      ],
    ];
  }

  /**
   * phpBB's shapes: every visitor holds a session (`phpbb3_sid`, with `phpbb3_u` 1 for a guest); a
   * sid the board no longer knows is answered with a new guest session under the same names.
   */
  function forumRoutes(): [string, Route][] {
    const guestSessions = new Set<string>();
    const visit = (exchange: Exchange): { sid: string; member: boolean } => {
      const sid = exchange.cookies.get("phpbb3_sid") ?? "";
      if (signedIn(exchange, "forum", "phpbb3_sid")) return { sid, member: true };
      if (guestSessions.has(sid)) return { sid, member: false };
      const guest = randomToken();
      guestSessions.add(guest);
      exchange.setCookie("phpbb3_sid", guest, "/forum");
      exchange.setCookie("phpbb3_u", "1", "/forum");
      return { sid: guest, member: false };
    };
    const board = (exchange: Exchange, title: string, content: (sid: string) => string) => {
      const { sid, member } = visit(exchange);
      const navigation = member
        ? `<li class="rightside"><a href="./ucp.php?mode=logout&amp;sid=${sid}" title="Logout [ ${user.username} ]" accesskey="x">Logout [ ${user.username} ]</a></li>
<li class="rightside"><a href="./ucp.php?sid=${sid}" title="User Control Panel">User Control Panel</a></li>
<li class="rightside">Logged in as <a href="./memberlist.php?mode=viewprofile&amp;u=2&amp;sid=${sid}" class="username">${user.username}</a></li>`
        : `<li class="rightside"><a href="./ucp.php?mode=login&amp;sid=${sid}" title="Login" accesskey="x">Login</a></li>
<li class="rightside"><a href="./ucp.php?mode=register&amp;sid=${sid}">Register</a></li>`;
      return htmlReply(`<!DOCTYPE html><html dir="ltr" lang="en-gb"><head><meta charset="utf-8"><title>Pine Forum - ${escapeHtml(title)}</title></head>
<body id="phpbb" class="section-index ltr"><div id="wrap"><div class="navbar"><ul class="linklist navlinks">
<li><a href="./faq.php?sid=${sid}">FAQ</a></li>
${navigation}
</ul></div>
<div id="page-body">${content(sid)}</div>
<div class="copyright">Powered by phpBB&reg; Forum Software</div></div></body></html>`);
    };
    const loginForm = (exchange: Exchange, error?: string) =>
      board(
        exchange,
        "Login",
        (sid) => `<form action="./ucp.php?mode=login&amp;sid=${sid}" method="post" id="login"><div class="panel"><h2 class="login-title">Login</h2>
${error ? `<div class="error">${escapeHtml(error)}</div>` : ""}
<dl><dt><label for="username">Username:</label></dt><dd><input type="text" name="username" id="username" size="25" class="inputbox autowidth"></dd></dl>
<dl><dt><label for="password">Password:</label></dt><dd><input type="password" id="password" name="password" size="25" class="inputbox autowidth" autocomplete="off"></dd></dl>
<input type="hidden" name="sid" value="${sid}"><input type="submit" name="login" value="Login" class="button1"></div></form>`,
      );
    return [
      [
        "/forum/index.php",
        { GET: (exchange) => board(exchange, "Index page", () => `<h2 class="forum-title">Pine Forum</h2><ul class="topiclist forums"><li><a href="./viewforum.php?f=2" class="forumtitle">Cones and needles</a></li></ul>`) },
      ],
      [
        "/forum/ucp.php",
        {
          GET: (exchange) => {
            if (exchange.query.get("mode") === "logout") {
              sessions.delete(exchange.cookies.get("phpbb3_sid") ?? "");
              return redirectReply("./index.php");
            }
            return loginForm(exchange);
          },
          POST: (exchange) => {
            const sid = exchange.cookies.get("phpbb3_sid");
            if (!sid || !guestSessions.has(sid) || exchange.form.get("sid") !== sid) return invalidCsrfReply();
            if (!accepts("forum", exchange.form.get("username"), exchange.form.get("password"))) {
              return loginForm(exchange, "You have specified an incorrect password. Please check your password and try again.");
            }
            guestSessions.delete(sid);
            exchange.setCookie("phpbb3_sid", signIn("forum"), "/forum");
            exchange.setCookie("phpbb3_u", "2", "/forum");
            return redirectReply("./index.php");
          },
        },
      ],
    ];
  }

  /** Public documentation; the login only unlocks downloads, so the page is the same for everyone. */
  function docsRoutes(): [string, Route][] {
    const visitors = preSessions("docs_presession", "/docs");
    const layout = (title: string, main: string) =>
      htmlReply(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Pine Docs</title></head>
<body><nav class="sidebar"><a href="/docs/">Introduction</a> <a href="/docs/">Installation</a></nav><main>${main}</main></body></html>`);
    return [
      ["/docs/", { GET: () => layout("Introduction", "<h1>Introduction</h1><p>Pine is a tool for counting cones.</p>") }],
      [
        "/docs/login",
        {
          GET: (exchange) =>
            layout(
              "Sign in",
              postForm({
                action: "/docs/login",
                csrfToken: visitors.csrfToken(visitors.idOf(exchange)),
                submit: "Sign in",
                body: `${field({ id: "email", name: "email", label: "Email", type: "email", autocomplete: "username" })}
${field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password" })}`,
              }),
            ),
          POST: (exchange) => {
            if (!visitors.verifiedId(exchange)) return invalidCsrfReply();
            if (!accepts("docs", exchange.form.get("email"), exchange.form.get("password"))) return layout("Sign in", `<p class="error">Wrong email or password.</p>`);
            exchange.setCookie("docs_session", signIn("docs"), "/docs");
            return redirectReply("/docs/");
          },
        },
      ],
    ];
  }

  const loginPaths: Record<SessionShape, string> = {
    wiki: "/w/index.php?title=Special:UserLogin&returnto=Main+Page",
    team: "/team/login",
    forum: "/forum/ucp.php?mode=login",
    docs: "/docs/login",
  };
  return {
    url,
    user,
    identifierFor,
    loginUrl: (shape) => `${url}${loginPaths[shape]}`,
    endSessions: (shape) => {
      for (const [token, owner] of sessions) if (owner === shape) sessions.delete(token);
    },
    holdPages: (shape, status) => {
      if (status === null) held.delete(shape);
      else held.set(shape, status);
    },
    logins: (shape) => logins.get(shape) ?? 0,
    stop: server.stop,
  };
}
