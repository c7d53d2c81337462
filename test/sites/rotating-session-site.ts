import { alertDanger, escapeHtml, field, page } from "./site-html.ts";
import { handlerClock, htmlReply, randomToken, redirectReply, serveRoutes, textReply, type Exchange, type Route } from "./site-http.ts";

/**
 * An app, on 127.0.0.1, whose session is a refresh token swapped for a new one at every load of a
 * signed-in page, as many apps renew theirs. The token presented is spent by the swap; a spent token
 * still opens the app during a grace period, which ends when the test calls `expireSpent()` (no
 * clock: the test decides when the grace is over). Two ways to keep the token:
 * - `cookie`: an HttpOnly cookie `rt`, set by the login's POST and swapped by a Set-Cookie on each
 *   load of `/cookie/app`; a page load without a live token is sent to `/cookie/login`.
 * - `storage`: `localStorage.rt`, set by the login page's script from the login API's answer, and
 *   swapped by `/storage/app`'s script, which posts it to `/storage/api/refresh` at each load; a
 *   refused token (401) sends the page to `/storage/login`.
 * Either signed-in page shows "Signed in as Ada Lovelace" and a "Sign out" link.
 */

export type RotatingShape = "cookie" | "storage";

export interface RotatingSessionSite {
  origin: string;
  user: { name: string; email: string; password: string };
  loginUrl(shape: RotatingShape): string;
  appUrl(shape: RotatingShape): string;
  /** Ends the grace period of every token spent so far: only the newest token of each session opens the app. */
  expireSpent(): void;
  /** While paused, a signed-in page keeps the token it was given (an app that does not rotate). */
  pauseRotation(paused: boolean): void;
  /** Milliseconds spent in the site's own request handlers since the last reset. */
  serverTimeMs(): number;
  resetServerTime(): void;
  stop(): Promise<void>;
}

type TokenState = "current" | "spent" | "expired";

const user = { name: "Ada Lovelace", email: "ada@example.com", password: "correct horse" };
const brand = "Rotor";

export async function startRotatingSessionSite(): Promise<RotatingSessionSite> {
  const tokens = new Map<string, TokenState>();
  let paused = false;

  function issue(): string {
    const token = randomToken();
    tokens.set(token, "current");
    return token;
  }

  /** The token to keep after a load that presented `token`, or null when it opens nothing. */
  function redeem(token: string | undefined): string | null {
    const state = token === undefined ? undefined : tokens.get(token);
    if (token === undefined || state === undefined || state === "expired") return null;
    if (paused) return token;
    tokens.set(token, "spent");
    return issue();
  }

  const signedIn = (exchange: Exchange) => exchange.form.get("email")?.trim().toLowerCase() === user.email && exchange.form.get("password") === user.password;

  const loginForm = (action: string, error?: string) =>
    `${alertDanger(error)}<form method="post" action="${action}" id="login">
${field({ id: "email", name: "email", label: "Email", type: "email", autocomplete: "username" })}
${field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password" })}
<button type="submit" class="btn btn-primary">Sign in</button>
</form>`;

  const signedInMain = `<p class="who">Signed in as ${escapeHtml(user.name)}</p><h1>Dashboard</h1>`;
  const signOut = `<a href="/sign-out">Sign out</a>`;

  const storageLoginScript = `
document.getElementById("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const answer = await fetch("/storage/api/login", { method: "POST", body: new URLSearchParams(new FormData(event.target)) });
  if (!answer.ok) {
    document.querySelector("main").insertAdjacentHTML("afterbegin", '<div class="alert alert-danger" role="alert">Wrong email or password</div>');
    return;
  }
  localStorage.setItem("rt", await answer.text());
  location.href = "/storage/app";
});`;

  const storageAppScript = `
(async () => {
  const token = localStorage.getItem("rt");
  const answer = token ? await fetch("/storage/api/refresh", { method: "POST", body: new URLSearchParams({ rt: token }) }) : null;
  if (!answer || !answer.ok) {
    localStorage.removeItem("rt");
    location.href = "/storage/login";
    return;
  }
  localStorage.setItem("rt", await answer.text());
  document.querySelector("main").innerHTML = ${JSON.stringify(signedInMain)};
  document.querySelector("header nav").innerHTML = ${JSON.stringify(signOut)};
})();`;

  const routes = new Map<string, Route>([
    ["/cookie/login", {
      GET: () => htmlReply(page({ brand, title: "Sign in", main: loginForm("/cookie/login") })),
      POST: (exchange) => {
        if (!signedIn(exchange)) return htmlReply(page({ brand, title: "Sign in", main: loginForm("/cookie/login", "Wrong email or password") }), 401);
        exchange.setCookie("rt", issue(), "/");
        return redirectReply("/cookie/app");
      },
    }],
    ["/cookie/app", {
      GET: (exchange) => {
        const next = redeem(exchange.cookies.get("rt"));
        if (next === null) return redirectReply("/cookie/login");
        exchange.setCookie("rt", next, "/");
        return htmlReply(page({ brand, title: "Dashboard", main: signedInMain, nav: signOut }));
      },
    }],
    ["/storage/login", { GET: () => htmlReply(page({ brand, title: "Sign in", main: loginForm("/storage/api/login"), script: storageLoginScript })) }],
    ["/storage/api/login", { POST: (exchange) => (signedIn(exchange) ? textReply(issue()) : textReply("wrong email or password", 401)) }],
    ["/storage/app", { GET: () => htmlReply(page({ brand, title: "Dashboard", main: "<p>Loading…</p>", script: storageAppScript })) }],
    ["/storage/api/refresh", {
      POST: (exchange) => {
        const next = redeem(exchange.form.get("rt") ?? undefined);
        return next === null ? textReply("the session has ended", 401) : textReply(next);
      },
    }],
  ]);

  const clock = handlerClock();
  const server = await serveRoutes(routes, clock);
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    origin,
    user,
    loginUrl: (shape) => `${origin}/${shape}/login`,
    appUrl: (shape) => `${origin}/${shape}/app`,
    expireSpent() {
      for (const [token, state] of tokens) if (state === "spent") tokens.set(token, "expired");
    },
    pauseRotation(value) {
      paused = value;
    },
    serverTimeMs: clock.totalMs,
    resetServerTime: clock.reset,
    stop: () => server.stop(),
  };
}
