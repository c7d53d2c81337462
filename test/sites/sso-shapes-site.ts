import { alertDanger, escapeHtml, page, postForm } from "./site-html.ts";
import { handlerClock, htmlReply, invalidCsrfReply, preSessions, randomToken, redirectReply, serveRoutes, textReply, type Exchange, type Route } from "./site-http.ts";
import { startTestSso, type TestSso } from "./test-sso.ts";

/**
 * An app whose "sign in with the identity provider" control is none of a link or a submit button: the
 * page's script sends the browser to the provider (TestSSO, on localhost) when it is clicked. One
 * path prefix per shape, each with its own session cookie; listens on 127.0.0.1 only.
 * - `anchor`: an `<a>` with no href, "Log in with TestIdP", beside the app's own password form.
 * - `role-button`: a `<div role="button">` "Sign in with TestIdP", and no password form at all.
 * - `icon`: an icon `<button type="button">` whose only words are its aria-label "Continue with TestIdP", beside a password form.
 */

export const ssoShapes = ["anchor", "role-button", "icon"] as const;
export type SsoShape = (typeof ssoShapes)[number];

export interface SsoShapesSite {
  /** http://127.0.0.1:<port>; connections use domain "127.0.0.1" with "localhost" (the provider) allowed. */
  url: string;
  /** http://localhost:<port2>: the identity provider. */
  providerUrl: string;
  /** The one user, known to the identity provider and to the app's own password form. */
  user: { email: string; password: string };
  loginUrl(shape: SsoShape): string;
  /** Sessions the app started, by shape. */
  logins(shape: SsoShape): number;
  /** Password forms posted: to the app's own login forms, and to the identity provider's. */
  passwordsPosted(): { app: number; provider: number };
  /** Ends every session of `shape`. */
  expireSessions(shape: SsoShape): void;
  stop(): Promise<void>;
}

const brand = "Larch";

/** The control that starts the provider's sign-in, marked for the page's script by `data-sso`. */
const ssoControls: Record<SsoShape, string> = {
  anchor: `<a class="btn btn-sso" data-sso>Log in with TestIdP</a>`,
  "role-button": `<div class="btn btn-sso" role="button" tabindex="0" data-sso>Sign in with TestIdP</div>`,
  icon: `<button type="button" class="btn btn-icon" aria-label="Continue with TestIdP" data-sso><svg width="16" height="16" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7"></circle></svg></button>`,
};

export async function startSsoShapesSite(): Promise<SsoShapesSite> {
  const user = { email: "ada@example.com", password: "correct horse" };
  const clock = handlerClock();
  const routes = new Map<string, Route>();
  const server = await serveRoutes(routes, clock);
  const url = `http://127.0.0.1:${server.port}`;
  const callback = `${url}/sso/callback`;
  const provider: TestSso = await startTestSso({ user, clientId: "larch", redirectUri: callback, clock });
  /** The shape each sign-in through the provider started from, by its single-use state. */
  const pendingStates = new Map<string, SsoShape>();
  const sessions = new Map<string, SsoShape>();
  const logins = new Map<SsoShape, number>();
  let appPasswordPosts = 0;

  function signIn(exchange: Exchange, shape: SsoShape) {
    const token = randomToken();
    sessions.set(token, shape);
    logins.set(shape, (logins.get(shape) ?? 0) + 1);
    exchange.setCookie(`${shape}_session`, token, `/${shape}`);
    return redirectReply(`/${shape}/account`);
  }

  for (const shape of ssoShapes) {
    const base = `/${shape}`;
    const visitors = preSessions(`${shape}_presession`, base);
    const signedIn = (exchange: Exchange) => sessions.get(exchange.cookies.get(`${shape}_session`) ?? "") === shape;
    const withPassword = shape !== "role-button";

    const loginPage = (exchange: Exchange, error?: string) => {
      const state = randomToken();
      pendingStates.set(state, shape);
      const authorize = new URL("/authorize", provider.url);
      authorize.search = new URLSearchParams({ client_id: "larch", redirect_uri: callback, state }).toString();
      const form = withPassword
        ? postForm({
            action: `${base}/login`,
            csrfToken: visitors.csrfToken(visitors.idOf(exchange)),
            submit: "Log in",
            body: `<div class="form-group"><label for="email">Email</label><input type="email" class="form-control" id="email" name="email" autocomplete="username" required></div>
<div class="form-group"><label for="password">Password</label><input type="password" class="form-control" id="password" name="password" autocomplete="current-password" required></div>`,
          })
        : "";
      const main = `<h1>Welcome to ${brand}</h1>\n${alertDanger(error)}${form}\n<p class="divider">or</p>\n${ssoControls[shape]}`;
      // The provider's address is only in the script, as an app's bundle keeps it.
      const script = `document.querySelector("[data-sso]").addEventListener("click", () => { location.href = ${JSON.stringify(authorize.href).replace(/</g, "\\u003c")}; });`;
      return htmlReply(page({ brand, title: "Log in", main, script }));
    };

    routes.set(`${base}/login`, {
      GET: (exchange) => (signedIn(exchange) ? redirectReply(`${base}/account`) : loginPage(exchange)),
      POST: (exchange) => {
        appPasswordPosts++;
        if (!withPassword) return textReply("Method Not Allowed", 405);
        if (!visitors.verifiedId(exchange)) return invalidCsrfReply();
        if (exchange.form.get("email")?.trim() !== user.email || exchange.form.get("password") !== user.password) return loginPage(exchange, "Incorrect email or password.");
        return signIn(exchange, shape);
      },
    });
    routes.set(`${base}/account`, {
      GET: (exchange) => {
        if (!signedIn(exchange)) return redirectReply(`${base}/login`);
        const signOut = `<a href="${base}/logout">Sign out</a>`;
        return htmlReply(page({ brand, title: "Home", main: `<h1>Hello, ${escapeHtml(user.email)}</h1>\n<p>${signOut}</p>`, nav: signOut }));
      },
    });
    routes.set(`${base}/logout`, {
      GET: (exchange) => {
        sessions.delete(exchange.cookies.get(`${shape}_session`) ?? "");
        exchange.clearCookie(`${shape}_session`, base);
        return redirectReply(`${base}/login`);
      },
    });
  }

  routes.set("/sso/callback", {
    GET: (exchange) => {
      const state = exchange.query.get("state") ?? "";
      const shape = pendingStates.get(state);
      pendingStates.delete(state);
      const email = shape ? provider.redeem(exchange.query.get("code") ?? "", callback) : undefined;
      if (shape && email === user.email) return signIn(exchange, shape);
      return htmlReply(page({ brand, title: "Sign-in failed", main: `<h1>Sign-in failed</h1>\n${alertDanger("Sign-in with TestIdP failed.")}` }), 400);
    },
  });

  return {
    url,
    providerUrl: provider.url,
    user,
    loginUrl: (shape) => `${url}/${shape}/login`,
    logins: (shape) => logins.get(shape) ?? 0,
    passwordsPosted: () => ({ app: appPasswordPosts, provider: provider.signInsPosted() }),
    expireSessions: (shape) => {
      for (const [token, owner] of sessions) if (owner === shape) sessions.delete(token);
    },
    stop: async () => {
      await Promise.all([server.stop(), provider.stop()]);
    },
  };
}
