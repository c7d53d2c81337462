import { escapeHtml } from "./site-html.ts";
import { handlerClock, htmlReply, randomToken, redirectReply, serveRoutes, textReply, type Exchange, type Route } from "./site-http.ts";

/**
 * A login whose wrong password is told by script, not by the served markup, in the three shapes
 * apps use, one per path prefix, on 127.0.0.1:
 * - `dialog`: the form is sent by `fetch`; a rejection opens a message box drawn by script, a title
 *   bar marked as an error ("Login Failed", with an icon font's glyph) above the text that says what
 *   happened.
 * - `toast`: the same, but the text shows in a toast appended to the page, in a notification
 *   library's own class names, with an icon font's glyph.
 * - `inline`: the form posts and the answer is the login page again, whose inline script sets the
 *   message from a table of reasons (no literal statement a parser could read) into an element far
 *   from the form.
 * Nothing of the message is in the HTML the site serves. The right password sets a session cookie
 * and leads to `/<shape>/home`.
 */

export const messageBoxShapes = ["dialog", "toast", "inline"] as const;
export type MessageBoxShape = (typeof messageBoxShapes)[number];

export interface MessageBoxSite {
  user: { name: string; password: string };
  /** What every shape says of a wrong password. */
  rejection: string;
  loginUrl(shape: MessageBoxShape): string;
  homeUrl(shape: MessageBoxShape): string;
  stop(): Promise<void>;
}

const rejection = "You entered an incorrect password";

/** Each shape's script: what the page does with the form, and how it tells a rejection. */
const scripts: Record<MessageBoxShape, string> = {
  dialog: `
sendByFetch((text) => {
  document.querySelector(".msgbox")?.remove();
  const box = document.createElement("div");
  box.className = "msgbox";
  box.setAttribute("role", "dialog");
  box.setAttribute("aria-labelledby", "msgbox-title");
  box.innerHTML = '<div class="msgbox-titlebar msgbox-error"><span class="msgbox-icon material-icons">error</span><span id="msgbox-title" class="msgbox-title"></span></div>' +
    '<div class="msgbox-text"></div><div class="msgbox-buttons"><button type="button">OK</button></div>';
  box.querySelector(".msgbox-title").textContent = "Login Failed";
  box.querySelector(".msgbox-text").textContent = text;
  box.querySelector("button").addEventListener("click", () => box.remove());
  document.body.append(box);
});`,
  toast: `
sendByFetch((text) => {
  let root = document.getElementById("ui-notify-root");
  if (!root) {
    root = document.createElement("div");
    root.id = "ui-notify-root";
    document.body.append(root);
  }
  const item = document.createElement("div");
  item.className = "ui-notify__item ui-notify__item--bad";
  item.innerHTML = '<i class="material-icons">error</i><span class="ui-notify__text"></span>';
  item.querySelector(".ui-notify__text").textContent = text;
  root.append(item);
});`,
  inline: `
const reasons = { "bad-password": ${JSON.stringify(rejection)}, "locked": "Your account is locked" };
const reason = document.body.dataset.reason;
if (reason) document.getElementById("banner").textContent = reasons[reason];`,
};

/** Sends the form with fetch: the signed-in page on success, `tell(text)` with the site's answer otherwise. */
const fetchSender = `
function sendByFetch(tell) {
  const form = document.getElementById("login-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answer = await fetch(form.action, { method: "POST", body: new URLSearchParams(new FormData(form)) });
    if (answer.ok) location.href = await answer.text();
    else tell(await answer.text());
  });
}`;

function loginPage(shape: MessageBoxShape, reason: string | null): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · Acme Portal</title>
<style>
  .msgbox { position: fixed; top: 8px; right: 8px; width: 280px; border: 1px solid #999; background: #fff; }
  .msgbox-titlebar { background: #b3261e; color: #fff; padding: 4px; }
  #ui-notify-root { position: fixed; bottom: 8px; right: 8px; width: 280px; }
  .columns { display: flex; gap: 32px; }
</style></head>
<body${reason ? ` data-reason="${escapeHtml(reason)}"` : ""}>
<main class="layout">
<p id="banner"></p>
<div class="columns">
<section class="intro"><h2>Acme Portal</h2><p>Your projects, your team, in one place.</p></section>
<section class="card"><h1>Sign in</h1>
<form method="post" action="/${shape}/login" id="login-form">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form></section>
</div></main>
<script>${shape === "inline" ? "" : fetchSender}${scripts[shape]}</script>
</body></html>`;
}

export async function startMessageBoxSite(): Promise<MessageBoxSite> {
  const user = { name: "ada", password: "correct horse battery" };
  const sessions = new Set<string>();
  const routes = new Map<string, Route>();
  for (const shape of messageBoxShapes) {
    const home = `/${shape}/home`;
    const accepted = (exchange: Exchange) => exchange.form.get("username") === user.name && exchange.form.get("password") === user.password;
    const signIn = (exchange: Exchange) => {
      const token = randomToken();
      sessions.add(token);
      exchange.setCookie("portal_session", token, `/${shape}`);
    };
    routes.set(`/${shape}/login`, {
      GET: () => htmlReply(loginPage(shape, null)),
      POST: (exchange) => {
        if (shape === "inline") {
          if (!accepted(exchange)) return htmlReply(loginPage(shape, "bad-password"));
          signIn(exchange);
          return redirectReply(home);
        }
        if (!accepted(exchange)) return textReply(rejection, 401);
        signIn(exchange);
        return textReply(home);
      },
    });
    routes.set(home, {
      GET: (exchange) =>
        sessions.has(exchange.cookies.get("portal_session") ?? "")
          ? htmlReply(`<!doctype html><title>Projects · Acme Portal</title><header>Signed in as ${user.name} <a href="/${shape}/logout">Sign out</a></header><main><h1>Projects</h1></main>`)
          : redirectReply(`/${shape}/login`),
    });
  }
  const server = await serveRoutes(routes, handlerClock());
  const url = `http://127.0.0.1:${server.port}`;
  return {
    user,
    rejection,
    loginUrl: (shape) => `${url}/${shape}/login`,
    homeUrl: (shape) => `${url}/${shape}/home`,
    stop: server.stop,
  };
}
