import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { refAttribute } from "#shared/login/browser/dom-snapshot.ts";
import { listenOnLoopback, randomToken } from "./site-http.ts";

/**
 * A single-page app that draws its login late, as apps built on large bundles do, on 127.0.0.1: its
 * page is a splash; its bundle, a few MB of generated modules, is parsed and run in one synchronous
 * start-up; then it asks its server for its configuration, and then whether a session exists
 * (`GET /console/api/session`), and only on that call's 401 draws its login dialog. Between the two
 * calls the page is quiet.
 *
 * Two things stand for the time a real app takes there, without a sleep: a visitor without a session
 * asks about it only once the page has been read by the login engine (its snapshot marks the page's
 * links, which the page watches for), so the engine's first look always finds a quiet page without a
 * login; and the server holds every session check until the test answers them
 * (`answerSessionChecks`), so the engine also waits through a call in flight. The login keeps a
 * bearer token in `localStorage` and moves to `/console/home`, which draws "Signed in as".
 *
 * At `progressLoginUrl` the app checks the account in rounds before it sends the password, showing
 * each round's progress a few hundred milliseconds apart, the form unchanged and no message meanwhile.
 */

export interface LateLoginSite {
  user: { name: string; password: string };
  loginUrl: string;
  /** The same app, its sign-in showing a progress of several rounds before it sends the password. */
  progressLoginUrl: string;
  homeUrl: string;
  /** Resolves once the app has asked its server whether a session exists (the call held). */
  sessionCheckAsked(): Promise<void>;
  /** Answers the session checks held so far, and every later one at once. */
  answerSessionChecks(): void;
  stop(): Promise<void>;
}

const bundleModules = 4_000;
const progressRounds = 10;
const progressRoundMs = 500;

const shell = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme Console</title></head>
<body>
<div id="app"><div class="splash">Loading Acme Console…</div></div>
<footer><a href="/console/help">Help</a></footer>
<script src="/console/bundle.js" defer></script>
</body></html>`;

/** The app itself, after its generated modules: boots, asks, draws its login or its dashboard. */
const app = `
const root = document.getElementById("app");
function readByEngine() {
  return new Promise((resolve) => {
    if (document.querySelector("[${refAttribute}]")) return resolve();
    const observer = new MutationObserver(() => {
      if (!document.querySelector("[${refAttribute}]")) return;
      observer.disconnect();
      resolve();
    });
    observer.observe(document, { subtree: true, attributes: true, attributeFilter: ["${refAttribute}"] });
  });
}
function dashboard(name) {
  root.innerHTML = '<header><span>Signed in as <b id="who"></b></span> <button type="button" id="sign-out">Sign out</button></header><main><h1>Overview</h1></main>';
  document.getElementById("who").textContent = name;
}
function loginDialog(product) {
  root.innerHTML = '<div class="overlay"><div class="login-dialog" role="dialog" aria-labelledby="login-title"><h2 id="login-title"></h2>' +
    '<form id="login"><label>Username <input name="username" autocomplete="username"></label>' +
    '<label>Password <input name="password" type="password" autocomplete="current-password"></label>' +
    '<p class="login-error" hidden></p><p class="login-progress"></p><button type="submit">Sign in</button></form></div></div>';
  document.getElementById("login-title").textContent = "Sign in to " + product;
  const form = document.getElementById("login");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const rounds = Number(new URLSearchParams(location.search).get("rounds") ?? 0);
    for (let round = 1; round <= rounds; round++) {
      form.querySelector(".login-progress").textContent = "Checking your account: step " + round + " of " + rounds;
      await new Promise((resolve) => setTimeout(resolve, ${progressRoundMs}));
    }
    const answer = await fetch("/console/api/login", { method: "POST", body: new URLSearchParams(new FormData(form)) });
    if (!answer.ok) {
      const error = form.querySelector(".login-error");
      error.textContent = "Invalid username or password.";
      error.hidden = false;
      return;
    }
    const session = await answer.json();
    localStorage.setItem("console_token", session.token);
    history.pushState(null, "", "/console/home");
    dashboard(session.name);
  });
}
async function boot() {
  const config = await (await fetch("/console/api/config")).json();
  const token = localStorage.getItem("console_token");
  if (!token) await readByEngine();
  const session = await fetch("/console/api/session", { headers: token ? { authorization: "Bearer " + token } : {} });
  const answer = await session.json();
  if (session.ok) dashboard(answer.name);
  else loginDialog(config.product);
}
boot();
`;

/** A bundle of `bundleModules` generated modules, each instantiated at start-up, then the app. */
function bundle(): string {
  const modules: string[] = [];
  for (let index = 0; index < bundleModules; index++) {
    const table = Array.from({ length: 24 }, (_, position) => (index * 7919 + position * 104729) % 65521);
    modules.push(
      `modules["m${index}"] = function (exports) { exports.table = [${table.join(",")}]; exports.label = "module ${index} of the console: ${"x".repeat(index % 64)}"; exports.run = function (value) { return (value * ${index + 1}) % 65521; }; };`,
    );
  }
  return `(function () {
"use strict";
const modules = {};
${modules.join("\n")}
let checksum = 0;
for (const id in modules) {
  const exports = {};
  modules[id](exports);
  for (const value of exports.table) checksum = (checksum * 31 + exports.run(value)) | 0;
}
window.consoleChecksum = checksum;
${app}
})();
`;
}

export async function startLateLoginSite(): Promise<LateLoginSite> {
  const user = { name: "ada", password: "correct horse battery" };
  const tokens = new Set<string>();
  const script = bundle();
  let answering = false;
  const held: Array<() => void> = [];
  let asked!: () => void;
  const sessionAsked = new Promise<void>((resolve) => (asked = resolve));

  const json = (response: ServerResponse, status: number, value: unknown) => {
    response.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
    response.end(JSON.stringify(value));
  };
  const sessionCheck = (request: IncomingMessage, response: ServerResponse) => {
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    if (token !== undefined && tokens.has(token)) json(response, 200, { name: user.name });
    else json(response, 401, { error: "unauthorized" });
  };

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://site.invalid").pathname;
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method === "GET" && (path === "/console/" || path === "/console/home")) {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        response.end(shell);
      } else if (request.method === "GET" && path === "/console/bundle.js") {
        response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" });
        response.end(script);
      } else if (request.method === "GET" && path === "/console/api/config") {
        json(response, 200, { product: "Acme Console" });
      } else if (request.method === "GET" && path === "/console/api/session") {
        asked();
        if (answering) sessionCheck(request, response);
        else held.push(() => sessionCheck(request, response));
      } else if (request.method === "POST" && path === "/console/api/login") {
        const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
        if (form.get("username") !== user.name || form.get("password") !== user.password) return json(response, 401, { error: "invalid_credentials" });
        const token = randomToken();
        tokens.add(token);
        json(response, 200, { token, name: user.name });
      } else {
        response.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
        response.end("Not found");
      }
    });
  });
  const listening = await listenOnLoopback(server);
  const url = `http://127.0.0.1:${listening.port}`;
  return {
    user,
    loginUrl: `${url}/console/`,
    progressLoginUrl: `${url}/console/?rounds=${progressRounds}`,
    homeUrl: `${url}/console/home`,
    sessionCheckAsked: () => sessionAsked,
    answerSessionChecks() {
      answering = true;
      for (const answer of held.splice(0)) answer();
    },
    stop: listening.stop,
  };
}
