import { randomInt } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import { performance } from "node:perf_hooks";
import { generateTotpSecret, totpMatches } from "#shared/secrets/totp.ts";
import { escapeHtml } from "./site-html.ts";
import { handlerClock, listenOnLoopback, randomToken } from "./site-http.ts";

/**
 * Sites whose login exists only once script has run, for the browser login engine: no page of them
 * serves a form in its HTML. Written after real applications, one per path prefix, on 127.0.0.1:
 * - `spa`: a React-style single-page app; its bearer token lives in `localStorage` (no cookie at
 *   all). Like many SPAs it draws the signed-in shell (cached name, "Sign out") from the stored token
 *   before its API has answered, and only on the API's 401 drops the token and shows the login again.
 * - `reveal`: a marketing landing page whose login form is a modal built when "Log in" is clicked.
 * - `idfirst`: Auth0/Okta-style identifier first: email, password, an MFA method picker, then a code,
 *   each step drawn in place from JSON answers, all inside the open shadow root of `<login-card>`.
 * - `inline`: inputs outside any `<form>` and a `<button type="button">` with a click handler; a wrong
 *   password shows "Incorrect email or password." in the page without navigating.
 * - `session`: an MSAL-like portal whose token cache lives in `sessionStorage` only.
 * Each signed-in page draws `[data-signed-in-as]` (the user's name) only after the shape's account API,
 * `GET /<shape>/api/me`, accepted the session; `apiCalls(shape)` lists that API's answers.
 *
 * site-http's `serveRoutes` hands its handlers neither request headers nor JSON bodies, which these
 * apps' APIs are built on (bearer tokens, fetch with JSON), so this file runs its own small router.
 */

export const scriptShapes = ["spa", "reveal", "idfirst", "inline", "session"] as const;
export type ScriptShape = (typeof scriptShapes)[number];

export interface ScriptSites {
  /** http://127.0.0.1:<port>. */
  url: string;
  /** The one account, the same on every shape; `idfirst` asks for a TOTP of `totpSecret` after the password. */
  user: { email: string; password: string; name: string; totpSecret: string };
  /** Where a login on `shape` starts. */
  loginUrl(shape: ScriptShape): string;
  /** The signed-in page a login on `shape` ends on: its post-login URL. */
  homeUrl(shape: ScriptShape): string;
  /** Ends every session (token or cookie) of `shape` on the server; browsers keep what they stored. */
  revokeSessions(shape: ScriptShape): void;
  /** Successful logins of `shape`. */
  logins(shape: ScriptShape): number;
  /** Rejected passwords on `shape`. */
  failures(shape: ScriptShape): number;
  /** The statuses the account API (`GET /<shape>/api/me`) answered, oldest first: 200 signed in, 401 not. */
  apiCalls(shape: ScriptShape): number[];
  /** The code `idfirst` last sent by text message or email, for a test that picks one of those methods. */
  lastCodeSent(): string | undefined;
  /** Milliseconds spent in the site's own request handlers since the last reset. */
  serverTimeMs(): number;
  resetServerTime(): void;
  stop(): Promise<void>;
}

const user = { email: "ada@example.com", password: "correct horse battery", name: "Ada Lovelace" };

export async function startScriptSites(): Promise<ScriptSites> {
  const account = { ...user, totpSecret: generateTotpSecret() };
  const sessions = new Map<string, ScriptShape>();
  const logins = new Map<ScriptShape, number>();
  const failures = new Map<ScriptShape, number>();
  const apiCalls = new Map<ScriptShape, number[]>();
  const codesSent: string[] = [];
  const count = (counts: Map<ScriptShape, number>, shape: ScriptShape) => counts.set(shape, (counts.get(shape) ?? 0) + 1);

  const shared: ShapeContext = {
    account,
    signIn(shape) {
      const token = randomToken();
      sessions.set(token, shape);
      count(logins, shape);
      return token;
    },
    checkPassword(shape, email, password) {
      const accepted = email?.trim().toLowerCase() === account.email && password === account.password;
      if (!accepted) count(failures, shape);
      return accepted;
    },
    sendCode() {
      const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
      codesSent.push(code);
      return code;
    },
  };
  const shapes: Record<ScriptShape, ShapeSite> = {
    spa: spaSite(shared),
    reveal: revealSite(shared),
    idfirst: idFirstSite(shared),
    inline: inlineSite(shared),
    session: sessionStorageSite(shared),
  };

  const routes = new Map<string, Route>();
  for (const shape of scriptShapes) {
    const site = shapes[shape];
    const credentialOf = (request: ApiRequest) => (site.credential.kind === "bearer" ? request.bearer : request.cookie(site.credential.name));
    const calls: number[] = [];
    apiCalls.set(shape, calls);
    routes.set(`/${shape}/api/me`, {
      GET: (request) => {
        const signedIn = sessions.get(credentialOf(request) ?? "") === shape;
        calls.push(signedIn ? 200 : 401);
        if (signedIn) return json(200, { id: "usr_01HV7Q3K9", name: account.name, email: account.email });
        const challenge: Record<string, string> = site.credential.kind === "bearer" ? { "www-authenticate": 'Bearer error="invalid_token"' } : {};
        return json(401, { error: "unauthorized", message: "Authentication required." }, challenge);
      },
    });
    routes.set(`/${shape}/api/logout`, {
      POST: (request) => {
        sessions.delete(credentialOf(request) ?? "");
        return site.credential.kind === "cookie" ? json(200, {}, { "set-cookie": expiredCookie(site.credential.name, shape) }) : json(200, {});
      },
    });
    for (const [path, route] of site.routes) routes.set(path, route);
  }

  const clock = handlerClock();
  const server = await serve(routes, clock);
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    user: account,
    loginUrl: (shape) => `${url}${shapes[shape].loginPath}`,
    homeUrl: (shape) => `${url}${shapes[shape].homePath}`,
    revokeSessions: (shape) => {
      for (const [token, owner] of sessions) if (owner === shape) sessions.delete(token);
    },
    logins: (shape) => logins.get(shape) ?? 0,
    failures: (shape) => failures.get(shape) ?? 0,
    apiCalls: (shape) => [...(apiCalls.get(shape) ?? [])],
    lastCodeSent: () => codesSent.at(-1),
    serverTimeMs: clock.totalMs,
    resetServerTime: clock.reset,
    stop: server.stop,
  };
}

// ---------------------------------------------------------------------------------------------
// Shared: the router, the shapes' common parts, and the script every app's bundle starts with.

interface ApiRequest {
  /** The token of an `Authorization: Bearer` header. */
  bearer: string | undefined;
  cookie(name: string): string | undefined;
  /** A string field of the JSON or form-encoded body; anything else reads as absent. */
  field(name: string): string | undefined;
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

type Endpoint = (request: ApiRequest) => Answer;
type Route = Partial<Record<"GET" | "POST", Endpoint>>;

/** How a shape's browser proves its session to the account API. */
type Credential = { kind: "bearer" } | { kind: "cookie"; name: string };

interface ShapeSite {
  loginPath: string;
  homePath: string;
  credential: Credential;
  /** Pages, bundles and login endpoints; the account API (`/api/me`, `/api/logout`) is added for every shape. */
  routes: Array<[string, Route]>;
}

interface ShapeContext {
  account: ScriptSites["user"];
  /** A new session of `shape`: its token, for a bearer or a cookie. */
  signIn(shape: ScriptShape): string;
  /** Whether the email and password are the account's; a rejection counts as a failure of `shape`. */
  checkPassword(shape: ScriptShape, email: string | undefined, password: string | undefined): boolean;
  /** A new one-time code "sent" by text message or email. */
  sendCode(): string;
}

const maxBodyBytes = 64 * 1024;

function json(status: number, value: unknown, headers: Record<string, string> = {}): Answer {
  return { status, body: JSON.stringify(value), headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", ...headers } };
}

function html(document: string): Answer {
  return { status: 200, body: document, headers: { "content-type": "text/html; charset=utf-8" } };
}

function javascript(source: string): Answer {
  return { status: 200, body: source, headers: { "content-type": "text/javascript; charset=utf-8" } };
}

function sessionCookie(name: string, shape: ScriptShape, token: string): string {
  return `${name}=${token}; Path=/${shape}; HttpOnly; SameSite=Lax`;
}

function expiredCookie(name: string, shape: ScriptShape): string {
  return `${name}=; Path=/${shape}; Max-Age=0; HttpOnly; SameSite=Lax`;
}

async function serve(routes: Map<string, Route>, clock: ReturnType<typeof handlerClock>) {
  const server = createServer((incoming, response) => {
    readBody(incoming).then(
      (body) => {
        const startedAt = performance.now();
        const answer = body === undefined ? json(413, { error: "payload_too_large" }) : dispatch(routes, incoming, body);
        response.writeHead(answer.status, answer.headers);
        response.end(answer.body);
        clock.add(performance.now() - startedAt);
      },
      () => response.destroy(),
    );
  });
  return listenOnLoopback(server);
}

function dispatch(routes: Map<string, Route>, incoming: IncomingMessage, body: string): Answer {
  const path = new URL(incoming.url ?? "/", "http://site.invalid").pathname;
  const fields = bodyFields(incoming.headers["content-type"] ?? "", body);
  if (!fields) return json(400, { error: "invalid_request", message: "The request body could not be read." });
  const route = routes.get(path);
  if (!route) return { ...html("<!doctype html><title>Not found</title><h1>Page not found</h1>"), status: 404 };
  const endpoint = route[incoming.method as keyof Route];
  if (!endpoint) return json(405, { error: "method_not_allowed" }, { allow: Object.keys(route).join(", ") });
  const cookies = (incoming.headers.cookie ?? "").split(";").map((pair) => pair.trim());
  const request: ApiRequest = {
    bearer: /^Bearer\s+(\S+)$/i.exec(incoming.headers.authorization ?? "")?.[1],
    cookie: (name) => cookies.find((pair) => pair.startsWith(`${name}=`))?.slice(name.length + 1),
    field: (name) => (typeof fields[name] === "string" ? fields[name] : undefined),
  };
  try {
    return endpoint(request);
  } catch (error) {
    console.error(`script site: ${incoming.method} ${path} failed`, error);
    return json(500, { error: "internal_error" });
  }
}

/** A JSON object or a form-encoded body as fields; undefined for a body that is neither. */
function bodyFields(contentType: string, body: string): Record<string, unknown> | undefined {
  if (body === "") return {};
  if (contentType.startsWith("application/x-www-form-urlencoded")) return Object.fromEntries(new URLSearchParams(body));
  if (!contentType.startsWith("application/json")) return undefined;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The body as text, or undefined when it is over the limit (read to the end anyway, so the 413 can be sent). */
function readBody(incoming: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBodyBytes) chunks.push(chunk);
    });
    incoming.on("end", () => resolve(size <= maxBodyBytes ? Buffer.concat(chunks).toString("utf8") : undefined));
    incoming.on("error", reject);
  });
}

const styles = `body { font-family: system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header, .topbar { display: flex; justify-content: space-between; align-items: center; padding: 12px 24px; background: #fff; border-bottom: 1px solid #e3e6ec; }
main, .content { max-width: 720px; margin: 32px auto; padding: 0 16px; }
.auth-card, .signin, .modal { max-width: 380px; margin: 48px auto; padding: 32px; background: #fff; border-radius: 8px; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
.field { margin-bottom: 16px; } .field label { display: block; font-weight: 600; margin-bottom: 4px; }
.field input { width: 100%; padding: 10px; box-sizing: border-box; border: 1px solid #c8ccd4; border-radius: 4px; }
.btn { padding: 10px 16px; border-radius: 4px; cursor: pointer; border: 1px solid #c8ccd4; background: #fff; }
.btn-primary { background: #2f5bea; border-color: #2f5bea; color: #fff; width: 100%; }
.alert-danger, .form-error { background: #fdecea; color: #8a1c12; padding: 10px; border-radius: 4px; margin-bottom: 16px; }
.modal-backdrop { position: fixed; inset: 0; background: rgba(15,20,30,.5); } .modal { position: relative; }
.modal-close { position: absolute; top: 8px; right: 12px; border: 0; background: none; font-size: 20px; cursor: pointer; }
[hidden] { display: none !important; }`;

/** The page around an app: most of these serve an empty root and draw everything with script. */
function documentOf(options: { title: string; body: string; scripts: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(options.title)}</title>
  <style>${styles}</style>
</head>
<body>
${options.body}
${options.scripts}
</body>
</html>
`;
}

/**
 * What each app's bundle starts with: `h`, the element factory compiled JSX calls (props become
 * attributes, `on*` props listeners), a field with its label, and a JSON `fetch` wrapper. Kept free
 * of template literals so it can sit inside one here.
 */
const runtime = `
function h(tag, props, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (value === true) element.setAttribute(key, "");
    else if (value !== false && value != null) element.setAttribute(key, String(value));
  }
  element.append(...children.flat().filter((child) => child != null && child !== false));
  return element;
}
function labelledField(id, label, attributes) {
  return h("div", { class: "field" }, h("label", { for: id }, label), h("input", { id, ...attributes }));
}
async function api(path, { method = "GET", json, form, token } = {}) {
  const headers = { accept: "application/json" };
  if (token) headers.authorization = "Bearer " + token;
  if (json) headers["content-type"] = "application/json";
  const response = await fetch(path, { method, headers, body: json ? JSON.stringify(json) : form ? new URLSearchParams(form) : undefined });
  return { status: response.status, body: await response.json().catch(() => ({})) };
}
`;

/**
 * The signed-in page of a cookie-session shape: a "Loading" placeholder until the account API
 * answers, then the account, or a move to the login page on a 401.
 */
function cookieAppPage(shape: ScriptShape, brand: string, signedOutPath: string): Answer {
  return html(
    documentOf({
      title: `Dashboard · ${brand}`,
      body: `<div id="root"><p class="loading" role="status">Loading…</p></div>`,
      scripts: `<script>${runtime}
const root = document.getElementById("root");
api("/${shape}/api/me").then(({ status, body }) => {
  if (status === 401) return location.replace("${signedOutPath}");
  const signOut = async () => {
    await api("/${shape}/api/logout", { method: "POST" });
    location.assign("${signedOutPath}");
  };
  root.replaceChildren(
    h("header", {}, h("a", { class: "brand", href: location.pathname }, ${JSON.stringify(brand)}),
      h("nav", { class: "user-menu" }, h("span", { class: "user-email" }, body.email), h("button", { type: "button", class: "btn", onclick: signOut }, "Log out"))),
    h("main", {}, h("h1", {}, "Dashboard"), h("p", {}, "Signed in as ", h("strong", { "data-signed-in-as": true }, body.name))),
  );
});
</script>`,
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// spa: a React-style app with a bearer token in localStorage and no cookie.

function spaSite(context: ShapeContext): ShapeSite {
  const bundlePath = "/spa/assets/index-8c1f2e4b.js";
  // One document for every client-side route, as a history-API fallback serves it.
  const shell = () =>
    html(
      documentOf({
        title: "Pinecone",
        body: `<noscript>You need to enable JavaScript to run this app.</noscript>\n<div id="root"></div>`,
        scripts: `<script type="module" src="${bundlePath}"></script>`,
      }),
    );
  const bundle = `${runtime}
const storageKey = "pinecone.auth";
const loginPath = "/spa/login";
const homePath = "/spa/";
const root = document.getElementById("root");

function savedAuth() {
  try {
    return JSON.parse(localStorage.getItem(storageKey));
  } catch {
    return null;
  }
}

function navigate(path) {
  history.pushState(null, "", path);
  route();
}

function route() {
  const auth = savedAuth();
  if (!auth || !auth.accessToken) {
    if (location.pathname !== loginPath) history.replaceState(null, "", loginPath);
    return renderLogin();
  }
  if (location.pathname === loginPath) history.replaceState(null, "", homePath);
  renderApp(auth);
}

function renderLogin() {
  document.title = "Sign in · Pinecone";
  const alert = h("div", { class: "alert alert-danger", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "btn btn-primary" }, "Sign in");
  const form = h("form", { class: "auth-form", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      alert.hidden = true;
      const data = new FormData(form);
      const { status, body } = await api("/spa/api/auth/login", { method: "POST", json: { email: data.get("email"), password: data.get("password") } });
      submit.disabled = false;
      if (status !== 200) {
        form.elements.password.value = "";
        alert.textContent = body.message || "Something went wrong. Please try again.";
        alert.hidden = false;
        return;
      }
      localStorage.setItem(storageKey, JSON.stringify({ accessToken: body.access_token, user: body.user }));
      navigate(homePath);
    } },
    labelledField("email", "Email address", { name: "email", type: "email", autocomplete: "username", required: true }),
    labelledField("password", "Password", { name: "password", type: "password", autocomplete: "current-password", required: true }),
    submit,
  );
  root.replaceChildren(h("div", { class: "auth-card" }, h("h1", {}, "Sign in to Pinecone"), alert, form,
    h("p", { class: "muted" }, "New to Pinecone? ", h("a", { href: "/spa/signup" }, "Create an account"))));
}

// The shell comes from the stored token at once; the API's verdict arrives later.
function renderApp(auth) {
  document.title = "Projects · Pinecone";
  const main = h("main", { class: "content", "aria-busy": "true" }, h("div", { class: "skeleton" }, "Loading your projects…"));
  root.replaceChildren(
    h("header", { class: "topbar" }, h("a", { class: "brand", href: homePath }, "Pinecone"),
      h("nav", { class: "account-menu" }, h("span", { class: "avatar-name" }, auth.user ? auth.user.name : ""),
        h("button", { type: "button", class: "btn btn-link", onclick: () => signOut(auth) }, "Sign out"))),
    main,
  );
  api("/spa/api/me", { token: auth.accessToken }).then(({ status, body }) => {
    if (status === 401) {
      localStorage.removeItem(storageKey);
      return route();
    }
    main.setAttribute("aria-busy", "false");
    main.replaceChildren(h("h1", {}, "Projects"),
      h("p", { class: "welcome" }, "Signed in as ", h("strong", { "data-signed-in-as": true }, body.name)),
      h("ul", { class: "projects" }, h("li", {}, "Cone census 2026"), h("li", {}, "Needle density survey")));
  });
}

async function signOut(auth) {
  await api("/spa/api/logout", { method: "POST", token: auth.accessToken });
  localStorage.removeItem(storageKey);
  navigate(loginPath);
}

window.addEventListener("popstate", route);
route();
`;
  return {
    loginPath: "/spa/login",
    homePath: "/spa/",
    credential: { kind: "bearer" },
    routes: [
      ["/spa/", { GET: shell }],
      ["/spa/login", { GET: shell }],
      [bundlePath, { GET: () => javascript(bundle) }],
      [
        "/spa/api/auth/login",
        {
          POST: (request) => {
            if (!context.checkPassword("spa", request.field("email"), request.field("password"))) {
              return json(401, { error: "invalid_credentials", message: "Invalid email or password." });
            }
            return json(200, {
              access_token: context.signIn("spa"),
              token_type: "Bearer",
              expires_in: 86_400,
              user: { name: context.account.name, email: context.account.email },
            });
          },
        },
      ],
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// reveal: a landing page whose login form is a modal dialog built on the "Log in" click.

function revealSite(context: ShapeContext): ShapeSite {
  const cookieName = "_sprout_session";
  const landing = () =>
    html(
      documentOf({
        title: "Sprout · Notes that grow with you",
        body: `<header class="site-header"><a class="brand" href="/reveal/">Sprout</a>
<nav><a href="/reveal/features">Features</a> <a href="/reveal/pricing">Pricing</a>
<button type="button" class="btn nav-login" data-open-login>Log in</button> <a class="btn btn-primary" href="/reveal/signup">Get started</a></nav></header>
<main class="hero"><h1>Notes that grow with you</h1><p>Capture ideas, link them together and find them again in seconds.</p>
<a class="btn btn-primary" href="/reveal/signup">Start for free</a></main>
<footer><a href="/reveal/privacy">Privacy</a> · <a href="/reveal/terms">Terms</a></footer>`,
        scripts: `<script>${runtime}
const opener = document.querySelector("[data-open-login]");

function openLogin() {
  if (document.getElementById("login-dialog")) return;
  const alert = h("div", { class: "alert alert-danger", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "btn btn-primary" }, "Log in");
  const close = () => {
    backdrop.remove();
    opener.focus();
  };
  const form = h("form", { id: "new_user", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      alert.hidden = true;
      const { status, body } = await api("/reveal/api/session", { method: "POST", json: { email: form.elements["user[email]"].value, password: form.elements["user[password]"].value } });
      if (status === 200) return location.assign(body.redirect);
      submit.disabled = false;
      form.elements["user[password]"].value = "";
      alert.textContent = body.error || "Something went wrong. Please try again.";
      alert.hidden = false;
    } },
    labelledField("user_email", "Email", { name: "user[email]", type: "email", autocomplete: "email" }),
    labelledField("user_password", "Password", { name: "user[password]", type: "password", autocomplete: "current-password" }),
    h("p", {}, h("a", { href: "/reveal/password/new" }, "Forgot your password?")),
    submit,
  );
  const backdrop = h("div", { class: "modal-backdrop", onclick: (event) => event.target === backdrop && close() },
    h("div", { id: "login-dialog", class: "modal", role: "dialog", "aria-modal": "true", "aria-labelledby": "login-title" },
      h("button", { type: "button", class: "modal-close", "aria-label": "Close", onclick: close }, "×"),
      h("h2", { id: "login-title" }, "Log in to Sprout"), alert, form));
  document.body.append(backdrop);
  form.elements["user[email]"].focus();
}

opener.addEventListener("click", openLogin);
</script>`,
      }),
    );
  return {
    loginPath: "/reveal/",
    homePath: "/reveal/app",
    credential: { kind: "cookie", name: cookieName },
    routes: [
      ["/reveal/", { GET: landing }],
      ["/reveal/app", { GET: () => cookieAppPage("reveal", "Sprout", "/reveal/") }],
      [
        "/reveal/api/session",
        {
          POST: (request) => {
            if (!context.checkPassword("reveal", request.field("email"), request.field("password"))) {
              return json(401, { error: "Invalid email or password." });
            }
            return json(200, { redirect: "/reveal/app" }, { "set-cookie": sessionCookie(cookieName, "reveal", context.signIn("reveal")) });
          },
        },
      ],
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// idfirst: identifier first, then password, MFA method picker and code, all in <login-card>'s shadow root.

type MfaMethod = "otp" | "sms" | "email";

/** A login in progress, named by the `state` each answer hands the page back. */
interface Transaction {
  email: string;
  passwordAccepted: boolean;
  method?: MfaMethod;
  /** The code sent by text message or email. */
  sentCode?: string;
}

function idFirstSite(context: ShapeContext): ShapeSite {
  const cookieName = "appSession";
  const transactions = new Map<string, Transaction>();
  const methods: Array<{ id: MfaMethod; label: string; detail: string; target: string }> = [
    { id: "otp", label: "Authenticator app", detail: "Google Authenticator or similar", target: "" },
    { id: "sms", label: "Text message", detail: "XXX-XXX-4821", target: "XXX-XXX-4821" },
    { id: "email", label: "Email", detail: "a***@example.com", target: "a***@example.com" },
  ];
  const expired = () => json(400, { error: "Your session has expired. Please start again." });
  const loginPage = () =>
    html(
      documentOf({
        title: "Log in | Acme",
        body: `<main class="login-wrapper"><login-card tenant="acme" client="Acme Dashboard"></login-card></main>`,
        scripts: `<script src="/idfirst/assets/login-card.js" defer></script>`,
      }),
    );
  const cardStyles = `.card { max-width: 400px; margin: 48px auto; padding: 40px; background: #fff; border-radius: 5px; box-shadow: 0 12px 40px rgba(0,0,0,.12); font-family: system-ui, sans-serif; text-align: center; }
.field { text-align: left; margin: 16px 0; } label { display: block; font-size: 14px; margin-bottom: 4px; }
input { width: 100%; padding: 14px; box-sizing: border-box; border: 1px solid #c9cace; border-radius: 3px; font-size: 16px; }
.button-primary { width: 100%; padding: 14px; background: #635dff; color: #fff; border: 0; border-radius: 3px; font-size: 16px; cursor: pointer; }
.button-link { background: none; border: 0; color: #635dff; cursor: pointer; margin-top: 16px; }
.methods { list-style: none; padding: 0; } .method { width: 100%; display: flex; flex-direction: column; align-items: flex-start; padding: 14px; margin: 8px 0; border: 1px solid #c9cace; border-radius: 3px; background: #fff; cursor: pointer; }
.method-detail { color: #65676e; font-size: 14px; } .error-message { color: #d03c38; background: #fdecea; padding: 10px; margin: 12px 0; text-align: left; }
[hidden] { display: none !important; }`;
  const cardScript = `${runtime}
const base = "/idfirst/u/api";
const styles = ${JSON.stringify(cardStyles)};

class LoginCard extends HTMLElement {
  constructor() {
    super();
    this.attachShadow({ mode: "open" });
    this.transaction = null;
    this.identifier = "";
    this.methods = [];
  }

  connectedCallback() {
    this.showIdentifier();
  }

  render(title, subtitle, ...content) {
    this.shadowRoot.replaceChildren(h("style", {}, styles),
      h("div", { class: "card" }, h("div", { class: "logo", role: "img", "aria-label": "Acme" }, "ACME"), h("h1", {}, title), h("p", { class: "subtitle" }, subtitle), ...content));
    const first = this.shadowRoot.querySelector("input:not([type=hidden])");
    if (first) first.focus();
  }

  // A step's form: the answer of "onsubmit" is an error message to show, or nothing.
  form(children, onsubmit) {
    const alert = h("div", { class: "error-message", role: "alert", hidden: true });
    const form = h("form", { method: "post", novalidate: true, onsubmit: async (event) => {
        event.preventDefault();
        alert.hidden = true;
        form.setAttribute("aria-busy", "true");
        const message = await onsubmit(new FormData(form), event.submitter);
        form.removeAttribute("aria-busy");
        if (message) {
          alert.textContent = message;
          alert.hidden = false;
        }
      } }, alert, ...children);
    return form;
  }

  continueButton() {
    return h("button", { type: "submit", name: "action", value: "default", class: "button-primary" }, "Continue");
  }

  showIdentifier() {
    this.render("Welcome", "Log in to Acme to continue to " + this.getAttribute("client") + ".",
      this.form([
        labelledField("username", "Email address", { name: "username", type: "text", inputmode: "email", autocomplete: "username", autocapitalize: "none", spellcheck: "false", value: this.identifier }),
        this.continueButton(),
      ], async (data) => {
        const { status, body } = await api(base + "/identifier", { method: "POST", json: { username: data.get("username") } });
        if (status !== 200) return body.error;
        this.transaction = body.state;
        this.identifier = body.identifier;
        this.showPassword();
      }),
      h("p", {}, "Don't have an account? ", h("a", { href: "/idfirst/u/signup" }, "Sign up")));
  }

  showPassword() {
    this.render("Enter Your Password", "Enter your password for Acme to continue to " + this.getAttribute("client") + ".",
      this.form([
        h("div", { class: "identifier" }, h("span", {}, this.identifier), " ", h("a", { href: "#", onclick: (event) => { event.preventDefault(); this.showIdentifier(); } }, "Edit")),
        h("input", { type: "hidden", name: "username", value: this.identifier }),
        labelledField("password", "Password", { name: "password", type: "password", autocomplete: "current-password" }),
        this.continueButton(),
      ], async (data) => {
        const { status, body } = await api(base + "/password", { method: "POST", json: { state: this.transaction, password: data.get("password") } });
        if (status !== 200) {
          this.shadowRoot.querySelector("input[name=password]").value = "";
          return body.error;
        }
        this.methods = body.methods;
        this.showMethods();
      }),
      h("p", {}, h("a", { href: "/idfirst/u/reset-password" }, "Forgot password?")));
  }

  showMethods() {
    this.render("Verify Your Identity", "Select a method to verify your identity",
      this.form([
        h("ul", { class: "methods" }, this.methods.map((method) =>
          h("li", {}, h("button", { type: "submit", name: "method", value: method.id, class: "method" },
            h("span", { class: "method-label" }, method.label), h("span", { class: "method-detail" }, method.detail))))),
      ], async (data, submitter) => {
        const { status, body } = await api(base + "/mfa/challenge", { method: "POST", json: { state: this.transaction, method: submitter.value } });
        if (status !== 200) return body.error;
        this.showCode(body);
      }));
  }

  showCode(challenge) {
    const instructions = {
      otp: "Check your preferred one-time password application for a code.",
      sms: "We've sent a text message to: " + challenge.target,
      email: "We've sent an email with your code to: " + challenge.target,
    };
    this.render("Verify Your Identity", instructions[challenge.method],
      this.form([
        labelledField("code", challenge.method === "otp" ? "Enter your one-time code" : "Enter the 6-digit code", { name: "code", type: "text", inputmode: "numeric", pattern: "[0-9]*", maxlength: "6", autocomplete: "one-time-code" }),
        this.continueButton(),
      ], async (data) => {
        const { status, body } = await api(base + "/mfa/verify", { method: "POST", json: { state: this.transaction, code: data.get("code") } });
        if (status !== 200) return body.error;
        location.assign(body.redirect);
      }),
      h("button", { type: "button", class: "button-link", onclick: () => this.showMethods() }, "Try another method"));
  }
}

customElements.define("login-card", LoginCard);
`;
  const transactionOf = (request: ApiRequest) => transactions.get(request.field("state") ?? "");
  return {
    loginPath: "/idfirst/u/login",
    homePath: "/idfirst/dashboard",
    credential: { kind: "cookie", name: cookieName },
    routes: [
      ["/idfirst/u/login", { GET: loginPage }],
      ["/idfirst/assets/login-card.js", { GET: () => javascript(cardScript) }],
      ["/idfirst/dashboard", { GET: () => cookieAppPage("idfirst", "Acme Dashboard", "/idfirst/u/login") }],
      [
        "/idfirst/u/api/identifier",
        {
          // Any well-formed address goes on to the password step, so the step tells no one which accounts exist.
          POST: (request) => {
            const email = request.field("username")?.trim() ?? "";
            if (!/^[^@\s]+@[^@\s]+$/.test(email)) return json(400, { error: "Email is not valid." });
            const state = randomToken();
            transactions.set(state, { email, passwordAccepted: false });
            return json(200, { state, identifier: email, next: "password" });
          },
        },
      ],
      [
        "/idfirst/u/api/password",
        {
          POST: (request) => {
            const transaction = transactionOf(request);
            if (!transaction) return expired();
            if (!context.checkPassword("idfirst", transaction.email, request.field("password"))) return json(400, { error: "Wrong email or password" });
            transaction.passwordAccepted = true;
            return json(200, { next: "mfa-select", methods: methods.map(({ id, label, detail }) => ({ id, label, detail })) });
          },
        },
      ],
      [
        "/idfirst/u/api/mfa/challenge",
        {
          POST: (request) => {
            const transaction = transactionOf(request);
            const method = methods.find((candidate) => candidate.id === request.field("method"));
            if (!transaction?.passwordAccepted) return expired();
            if (!method) return json(400, { error: "Select a method to verify your identity" });
            transaction.method = method.id;
            transaction.sentCode = method.id === "otp" ? undefined : context.sendCode();
            return json(200, { next: "mfa-code", method: method.id, target: method.target });
          },
        },
      ],
      [
        "/idfirst/u/api/mfa/verify",
        {
          POST: (request) => {
            const state = request.field("state") ?? "";
            const transaction = transactions.get(state);
            if (!transaction?.passwordAccepted || !transaction.method) return expired();
            const code = request.field("code")?.trim() ?? "";
            const valid = transaction.method === "otp" ? /^\d{6}$/.test(code) && totpMatches(context.account.totpSecret, code) : code === transaction.sentCode;
            if (!valid) return json(400, { error: "The code you entered is invalid" });
            transactions.delete(state);
            return json(200, { redirect: "/idfirst/dashboard" }, { "set-cookie": sessionCookie(cookieName, "idfirst", context.signIn("idfirst")) });
          },
        },
      ],
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// inline: inputs outside any <form>, a type=button with a click handler, errors shown in place.

function inlineSite(context: ShapeContext): ShapeSite {
  const cookieName = "ledger_sid";
  const signInPage = () =>
    html(
      documentOf({
        title: "Sign in · Ledger",
        body: `<header><a class="brand" href="/inline/signin">Ledger</a></header>\n<div id="app"></div>`,
        scripts: `<script>${runtime}
const alert = h("div", { class: "form-error", role: "alert", hidden: true });
const email = h("input", { id: "email", type: "email", placeholder: "you@company.com", autocomplete: "email" });
const password = h("input", { id: "password", type: "password", placeholder: "Your password", autocomplete: "current-password" });
const submit = h("button", { type: "button", class: "btn btn-primary", onclick: signIn }, "Sign in");

async function signIn() {
  alert.hidden = true;
  submit.disabled = true;
  const { status, body } = await api("/inline/api/sessions", { method: "POST", json: { email: email.value, password: password.value } });
  if (status === 201) return location.assign("/inline/home");
  submit.disabled = false;
  password.value = "";
  alert.textContent = body.message || "Something went wrong. Please try again.";
  alert.hidden = false;
}

document.getElementById("app").replaceChildren(h("div", { class: "signin" },
  h("h1", {}, "Sign in to Ledger"),
  alert,
  h("div", { class: "field" }, h("label", { for: "email" }, "Email"), email),
  h("div", { class: "field" }, h("label", { for: "password" }, "Password"), password),
  submit,
  h("p", {}, h("a", { href: "/inline/forgot-password" }, "Forgot your password?"))));
</script>`,
      }),
    );
  return {
    loginPath: "/inline/signin",
    homePath: "/inline/home",
    credential: { kind: "cookie", name: cookieName },
    routes: [
      ["/inline/signin", { GET: signInPage }],
      ["/inline/home", { GET: () => cookieAppPage("inline", "Ledger", "/inline/signin") }],
      [
        "/inline/api/sessions",
        {
          POST: (request) => {
            if (!context.checkPassword("inline", request.field("email"), request.field("password"))) {
              return json(401, { error: "invalid_credentials", message: "Incorrect email or password." });
            }
            return json(201, { ok: true }, { "set-cookie": sessionCookie(cookieName, "inline", context.signIn("inline")) });
          },
        },
      ],
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// session: an MSAL-like portal whose token cache lives in sessionStorage only.

function sessionStorageSite(context: ShapeContext): ShapeSite {
  const bundlePath = "/session/assets/main.js";
  const tenantId = "9188040d-6c67-4c5b-b112-36a304b66dad";
  const homeAccountId = `00000000-0000-0000-66f3-3332eca7ea81.${tenantId}`;
  const shell = () =>
    html(
      documentOf({
        title: "Contoso Portal",
        body: `<div id="root"></div>`,
        scripts: `<script src="${bundlePath}" defer></script>`,
      }),
    );
  const bundle = `${runtime}
const clientId = "6731de76-14a6-49ae-97bc-6eba6914391e";
const accountKeysKey = "msal.account.keys";
const tokenKeysKey = "msal.token.keys." + clientId;
const root = document.getElementById("root");

function readJson(key) {
  try {
    return JSON.parse(sessionStorage.getItem(key));
  } catch {
    return null;
  }
}

function cachedToken() {
  const keys = readJson(tokenKeysKey);
  const entry = keys && keys.accessToken.length ? readJson(keys.accessToken[0]) : null;
  return entry ? entry.secret : null;
}

function cacheTokens(body) {
  const account = body.account;
  const accountKey = [account.homeAccountId, location.hostname, account.tenantId].join("-");
  const tokenKey = [account.homeAccountId, location.hostname, "accesstoken", clientId, account.tenantId, body.scope.toLowerCase()].join("-");
  const now = Math.floor(Date.now() / 1000);
  sessionStorage.setItem(accountKey, JSON.stringify({ homeAccountId: account.homeAccountId, environment: location.hostname, realm: account.tenantId, username: account.username, name: account.name, authorityType: "MSSTS" }));
  sessionStorage.setItem(tokenKey, JSON.stringify({ credentialType: "AccessToken", homeAccountId: account.homeAccountId, environment: location.hostname, clientId, realm: account.tenantId, target: body.scope, secret: body.access_token, cachedAt: String(now), expiresOn: String(now + body.expires_in) }));
  sessionStorage.setItem(accountKeysKey, JSON.stringify([accountKey]));
  sessionStorage.setItem(tokenKeysKey, JSON.stringify({ idToken: [], accessToken: [tokenKey], refreshToken: [] }));
}

function clearCache() {
  const tokenKeys = readJson(tokenKeysKey);
  const keys = [accountKeysKey, tokenKeysKey, ...(readJson(accountKeysKey) || []), ...(tokenKeys ? tokenKeys.accessToken : [])];
  keys.forEach((key) => sessionStorage.removeItem(key));
}

async function start() {
  const token = cachedToken();
  if (!token) return showLogin();
  if (location.pathname !== "/session/") history.replaceState(null, "", "/session/");
  root.replaceChildren(h("p", { class: "spinner", role: "status" }, "Loading your portal…"));
  const { status, body } = await api("/session/api/me", { token });
  if (status === 401) {
    clearCache();
    return showLogin();
  }
  showPortal(body, token);
}

function showLogin() {
  if (location.pathname !== "/session/login") history.replaceState(null, "", "/session/login");
  document.title = "Sign in · Contoso Portal";
  const alert = h("div", { class: "alert alert-danger", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "btn btn-primary", id: "idSIButton9" }, "Sign in");
  const form = h("form", { name: "f1", novalidate: true, onsubmit: async (event) => {
      event.preventDefault();
      submit.disabled = true;
      alert.hidden = true;
      const { status, body } = await api("/session/api/oauth2/v2.0/token", { method: "POST", form: {
        grant_type: "password", client_id: clientId, scope: "openid profile User.Read",
        username: form.elements.loginfmt.value, password: form.elements.passwd.value,
      } });
      submit.disabled = false;
      if (status === 200) {
        cacheTokens(body);
        return start();
      }
      form.elements.passwd.value = "";
      alert.textContent = body.error === "invalid_grant" ? "Your account or password is incorrect. If you don't remember your password, reset it now." : "Something went wrong. Please try again.";
      alert.hidden = false;
    } },
    labelledField("i0116", "Email", { name: "loginfmt", type: "email", autocomplete: "username", placeholder: "someone@example.com" }),
    labelledField("i0118", "Password", { name: "passwd", type: "password", autocomplete: "current-password" }),
    submit,
  );
  root.replaceChildren(h("div", { class: "auth-card" }, h("div", { class: "logo" }, "Contoso"), h("h1", {}, "Sign in"), alert, form));
}

function showPortal(account, token) {
  document.title = "Home · Contoso Portal";
  const signOut = async () => {
    await api("/session/api/logout", { method: "POST", token });
    clearCache();
    showLogin();
  };
  root.replaceChildren(
    h("header", {}, h("a", { class: "brand", href: "/session/" }, "Contoso Portal"),
      h("button", { type: "button", class: "btn", onclick: signOut }, "Sign out")),
    h("main", {}, h("h1", {}, "Good morning"), h("p", {}, "Signed in as ", h("strong", { "data-signed-in-as": true }, account.name), " (", account.email, ")")),
  );
}

start();
`;
  return {
    loginPath: "/session/login",
    homePath: "/session/",
    credential: { kind: "bearer" },
    routes: [
      ["/session/", { GET: shell }],
      ["/session/login", { GET: shell }],
      [bundlePath, { GET: () => javascript(bundle) }],
      [
        "/session/api/oauth2/v2.0/token",
        {
          POST: (request) => {
            if (request.field("grant_type") !== "password") return json(400, { error: "unsupported_grant_type" });
            if (!context.checkPassword("session", request.field("username"), request.field("password"))) {
              return json(400, { error: "invalid_grant", error_description: "AADSTS50126: Error validating credentials due to invalid username or password." });
            }
            return json(200, {
              token_type: "Bearer",
              scope: "openid profile User.Read",
              expires_in: 3599,
              access_token: context.signIn("session"),
              account: { homeAccountId, tenantId, username: context.account.email, name: context.account.name },
            });
          },
        },
      ],
    ],
  };
}
