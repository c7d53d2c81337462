import { generateTotpSecret, totpCode, totpMatches } from "#shared/secrets/totp.ts";
import { alertDanger, escapeHtml, page, postForm } from "./site-html.ts";
import { handlerClock, htmlReply, invalidCsrfReply, preSessions, randomToken, redirectReply, serveRoutes, type Exchange, type PreSessions, type Reply, type Route } from "./site-http.ts";

/**
 * Apps whose second step is an authenticator's code that the page does not call an authenticator's:
 * one path prefix per shape, each a password page and then a code page, its own session cookie.
 * - `one-time-password`: a box labelled "One-Time Password" with `autocomplete="one-time-code"`.
 * - `two-factor-code`: "Please enter your two-factor authentication code" above a box labelled "Code".
 * - `unnamed-code`: "Verification code", and nothing on the page says where the code comes from.
 * Each code page takes only the current code of the user's TOTP secret. Listens on 127.0.0.1 only.
 */

export const totpShapes = ["one-time-password", "two-factor-code", "unnamed-code"] as const;
export type TotpShape = (typeof totpShapes)[number];

export interface TotpSites {
  /** http://127.0.0.1:<port>; connections use domain "127.0.0.1". */
  url: string;
  user: { email: string; password: string; totpSecret: string };
  loginUrl(shape: TotpShape): string;
  /** The code the user's authenticator shows now. */
  totp(): string;
  /** Successful logins of `shape`. */
  logins(shape: TotpShape): number;
  /** Code forms posted to `shape`, right or wrong. */
  codesPosted(shape: TotpShape): number;
  /** Ends every session of `shape`: the next request with an old cookie is logged out. */
  expireSessions(shape: TotpShape): void;
  stop(): Promise<void>;
}

const brand = "Larchwood";

/** How each shape's code page asks for the code: its heading, the words above the box, the box's label, name and other attributes. */
const codePages: Record<TotpShape, { title: string; intro: string; label: string; name: string; attributes: string }> = {
  "one-time-password": { title: "Two-step login", intro: "", label: "One-Time Password", name: "token", attributes: `autocomplete="one-time-code"` },
  "two-factor-code": {
    title: "Verify",
    intro: "<p>Please enter your two-factor authentication code</p>",
    label: "Code",
    name: "code",
    attributes: `inputmode="numeric" maxlength="6"`,
  },
  "unnamed-code": { title: "Verify", intro: "<p>Enter the verification code to continue.</p>", label: "Verification code", name: "verification", attributes: "" },
};

export async function startTotpSites(): Promise<TotpSites> {
  const user = { email: "ada@example.com", password: "correct horse", totpSecret: generateTotpSecret() };
  const visitors = Object.fromEntries(totpShapes.map((shape) => [shape, preSessions(`${shape}_presession`, `/${shape}`)])) as Record<TotpShape, PreSessions>;
  /** Visitors whose password was right, by shape and pre-session id. */
  const passed = new Set<string>();
  const sessions = new Map<string, TotpShape>();
  const logins = new Map<TotpShape, number>();
  const codesPosted = new Map<TotpShape, number>();
  const routes = new Map<string, Route>();
  const view = (title: string, main: string, nav = "") => htmlReply(page({ brand, title, main, nav }));

  for (const shape of totpShapes) {
    const base = `/${shape}`;
    const csrf = (exchange: Exchange) => visitors[shape].csrfToken(visitors[shape].idOf(exchange));
    const signedIn = (exchange: Exchange) => sessions.get(exchange.cookies.get(`${shape}_session`) ?? "") === shape;

    const loginPage = (exchange: Exchange, error?: string): Reply =>
      view(
        "Log in",
        `<h1>Log in to ${brand}</h1>\n${alertDanger(error)}${postForm({
          action: `${base}/login`,
          csrfToken: csrf(exchange),
          submit: "Log in",
          body: `<div class="form-group"><label for="username">Username</label><input type="text" class="form-control" id="username" name="username" autocomplete="username" required></div>
<div class="form-group"><label for="password">Password</label><input type="password" class="form-control" id="password" name="password" autocomplete="current-password" required></div>`,
        })}`,
      );
    const codePage = (exchange: Exchange, error?: string): Reply => {
      const { title, intro, label, name, attributes } = codePages[shape];
      const body = `<div class="form-group"><label for="${name}">${escapeHtml(label)}</label><input type="text" class="form-control" id="${name}" name="${name}" ${attributes} required></div>`;
      return view(title, `<h1>${escapeHtml(title)}</h1>\n${intro}\n${alertDanger(error)}${postForm({ action: `${base}/verify`, csrfToken: csrf(exchange), submit: "Verify", body })}`);
    };

    routes.set(`${base}/login`, {
      GET: (exchange) => (signedIn(exchange) ? redirectReply(`${base}/account`) : loginPage(exchange)),
      POST: (exchange) => {
        const visitor = visitors[shape].verifiedId(exchange);
        if (!visitor) return invalidCsrfReply();
        if (exchange.form.get("username")?.trim() !== user.email || exchange.form.get("password") !== user.password) return loginPage(exchange, "Invalid username or password.");
        passed.add(`${shape}/${visitor}`);
        return redirectReply(`${base}/verify`);
      },
    });
    routes.set(`${base}/verify`, {
      GET: (exchange) => (passed.has(`${shape}/${visitors[shape].idOf(exchange)}`) ? codePage(exchange) : redirectReply(`${base}/login`)),
      POST: (exchange) => {
        const visitor = visitors[shape].verifiedId(exchange);
        if (!visitor) return invalidCsrfReply();
        if (!passed.has(`${shape}/${visitor}`)) return redirectReply(`${base}/login`);
        codesPosted.set(shape, (codesPosted.get(shape) ?? 0) + 1);
        const typed = exchange.form.get(codePages[shape].name) ?? "";
        if (!totpMatches(user.totpSecret, typed)) return codePage(exchange, "Invalid code.");
        passed.delete(`${shape}/${visitor}`);
        const token = randomToken();
        sessions.set(token, shape);
        logins.set(shape, (logins.get(shape) ?? 0) + 1);
        exchange.setCookie(`${shape}_session`, token, base);
        return redirectReply(`${base}/account`);
      },
    });
    routes.set(`${base}/account`, {
      GET: (exchange) => {
        if (!signedIn(exchange)) return redirectReply(`${base}/login`);
        const signOut = `<a href="${base}/logout">Sign out</a>`;
        return view("Dashboard", `<h1>Welcome back, ${escapeHtml(user.email)}</h1>\n<p>${signOut}</p>`, signOut);
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

  const server = await serveRoutes(routes, handlerClock());
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    user,
    loginUrl: (shape) => `${url}/${shape}/login`,
    totp: () => totpCode(user.totpSecret),
    logins: (shape) => logins.get(shape) ?? 0,
    codesPosted: (shape) => codesPosted.get(shape) ?? 0,
    expireSessions: (shape) => {
      for (const [token, owner] of sessions) if (owner === shape) sessions.delete(token);
    },
    stop: server.stop,
  };
}
