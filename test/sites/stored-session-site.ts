import { handlerClock, htmlReply, randomToken, serveRoutes, textReply, type Exchange, type Route } from "./site-http.ts";

/**
 * A single-page app, on 127.0.0.1, whose session lives in all four places a browser keeps state: an
 * HttpOnly cookie (`sid`), a bearer token in localStorage, a tab value in sessionStorage (as MSAL keeps
 * its cache) and a device key in IndexedDB. Its API accepts a call only with all four.
 * - `/sign-in` starts a session and stores it, by script, in all four places.
 * - `/tab-only` stores a value in this origin's sessionStorage and nothing else.
 * - `/app` draws the signed-in shell (with a "Sign out" link) from localStorage alone, before any
 *   server has accepted the token, then asks `/api/me`; a refused call changes nothing on the page,
 *   as many apps only notice on a later action. Its first script records, on `<html>`, what the
 *   page's own scripts found in each store (`data-local`, `data-session`, `data-session-keys`,
 *   `data-device`) and how the API answered (`data-api`).
 * `revoke()` ends every session on the server; the browser's stores stay as they are.
 */

export interface StoredSession {
  sid: string;
  token: string;
  tab: string;
  device: string;
}

export interface StoredSessionSite {
  origin: string;
  /** The session `/sign-in` started last. */
  lastSession(): StoredSession | undefined;
  revoke(): void;
  stop(): Promise<void>;
}

const signInScript = (session: Omit<StoredSession, "sid">) => `
  const session = ${JSON.stringify(session)};
  localStorage.setItem("token", session.token);
  sessionStorage.setItem("tab", session.tab);
  const opening = indexedDB.open("auth", 1);
  opening.onupgradeneeded = () => opening.result.createObjectStore("keys", { keyPath: "id" });
  opening.onsuccess = () => {
    const transaction = opening.result.transaction("keys", "readwrite");
    transaction.objectStore("keys").put({ id: "device", key: session.device });
    transaction.oncomplete = () => { document.documentElement.dataset.stored = "yes"; };
  };
`;

// Reads synchronously what the page finds at its very start, then what the asynchronous stores hold.
const appScript = `
  const root = document.documentElement;
  const token = localStorage.getItem("token");
  const tab = sessionStorage.getItem("tab");
  root.dataset.local = token ?? "";
  root.dataset.session = tab ?? "";
  root.dataset.sessionKeys = Object.keys(sessionStorage).sort().join(",");
  function deviceKey() {
    return new Promise((resolve) => {
      const opening = indexedDB.open("auth", 1);
      opening.onupgradeneeded = () => opening.result.createObjectStore("keys", { keyPath: "id" });
      opening.onerror = () => resolve("");
      opening.onsuccess = () => {
        const reading = opening.result.transaction("keys").objectStore("keys").get("device");
        reading.onsuccess = () => resolve(reading.result ? reading.result.key : "");
        reading.onerror = () => resolve("");
      };
    });
  }
  document.addEventListener("DOMContentLoaded", async () => {
    const main = document.querySelector("main");
    if (!token) {
      main.innerHTML = '<form><label>Email <input type="email" name="email"></label><label>Password <input type="password" name="password"></label><button>Sign in</button></form>';
      root.dataset.api = "none";
      return;
    }
    main.innerHTML = '<nav><span class="account">Your workspace</span> <a href="/sign-out">Sign out</a></nav><h1>Dashboard</h1>';
    const device = await deviceKey();
    root.dataset.device = device;
    const response = await fetch("/api/me", { method: "POST", body: new URLSearchParams({ token, tab: tab ?? "", device }) });
    root.dataset.api = String(response.status);
  });
`;

const page = (title: string, script: string) =>
  htmlReply(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title><script>${script}</script></head><body><main></main></body></html>`);

export async function startStoredSessionSite(): Promise<StoredSessionSite> {
  const sessions = new Map<string, StoredSession>();
  let last: StoredSession | undefined;

  const accepted = (exchange: Exchange): boolean => {
    const session = sessions.get(exchange.cookies.get("sid") ?? "");
    return (
      session !== undefined &&
      exchange.form.get("token") === session.token &&
      exchange.form.get("tab") === session.tab &&
      exchange.form.get("device") === session.device
    );
  };

  const routes = new Map<string, Route>([
    [
      "/sign-in",
      {
        GET: (exchange) => {
          const session = { sid: randomToken(), token: randomToken(), tab: randomToken(), device: randomToken() };
          sessions.set(session.sid, session);
          last = session;
          exchange.setCookie("sid", session.sid, "/");
          return page("Signing in", signInScript(session));
        },
      },
    ],
    ["/tab-only", { GET: () => page("Tab", `sessionStorage.setItem("tab-only", "kept"); document.documentElement.dataset.stored = "yes";`) }],
    ["/app", { GET: () => page("Workspace", appScript) }],
    ["/api/me", { POST: (exchange) => (accepted(exchange) ? { status: 200, body: '{"name":"Ada"}', headers: { "content-type": "application/json" } } : textReply("Unauthorized", 401)) }],
  ]);
  const server = await serveRoutes(routes, handlerClock());
  return {
    origin: `http://127.0.0.1:${server.port}`,
    lastSession: () => last,
    revoke: () => sessions.clear(),
    stop: server.stop,
  };
}
