import { escapeHtml, field, page, postForm } from "./site-html.ts";
import { handlerClock, htmlReply, invalidCsrfReply, preSessions, randomToken, redirectReply, serveRoutes, textReply, type Exchange, type Reply, type Route } from "./site-http.ts";

/**
 * A site that protects its accounts the way Rails apps do with Devise and Rack::Attack: a sign-in
 * form at `/users/sign_in` (`user[email]`, `user[password]`, the flash above the form), and, when
 * told to, a throttle answering every sign-in POST with a rate-limit page. It records when each
 * sign-in POST came, so a test can tell how many times a password was sent, and when.
 */

/** How the throttle answers a sign-in POST while it is on. */
export type Throttle =
  /** Rack::Attack's default: 429, `Retry-After`, a plain-text "Retry later". */
  | { kind: "http_429"; retryAfter?: string }
  /** A lockout told in the page, as login-limiting plugins do: 200, the form again, the message in the flash. */
  | { kind: "message"; message: string };

export interface GuardedLoginSite {
  url: string;
  loginUrl: string;
  user: { email: string; password: string };
  /** Sign-in POSTs received, whatever their answer. */
  submissions(): number;
  /** When each sign-in POST came (epoch milliseconds), oldest first. */
  submissionTimes(): number[];
  /** Sign-in POSTs that logged in. */
  logins(): number;
  /** The user changed the password elsewhere: the stored one is now wrong. */
  changePassword(password: string): void;
  throttle(answer: Throttle | null): void;
  /** A security notice the signed-in dashboard shows (GitHub's "failed attempts since your last visit"). */
  dashboardNotice(message: string | null): void;
  /** A sentence the sign-in page always shows under the form, such as its lockout policy. */
  signInPolicy(sentence: string | null): void;
  /** Ends every session server-side: the old cookies are logged out. */
  expireSessions(): void;
  stop(): Promise<void>;
}

const brand = "Ledgerly";

export async function startGuardedLoginSite(): Promise<GuardedLoginSite> {
  const user = { email: "grace@example.org", password: "analytical engine" };
  const visitors = preSessions("_ledgerly_visitor", "/");
  const sessions = new Set<string>();
  const submissions: number[] = [];
  let logins = 0;
  let throttle: Throttle | null = null;
  let notice: string | null = null;
  let policy: string | null = null;

  const view = (title: string, main: string, nav = "") => htmlReply(page({ brand, title, main, nav }));
  const flash = (message: string) => `<div class="alert alert-danger" role="alert">${escapeHtml(message)}</div>\n`;

  function signInPage(exchange: Exchange, options: { email?: string; alert?: string } = {}): Reply {
    const form = postForm({
      action: "/users/sign_in",
      csrfToken: visitors.csrfToken(visitors.idOf(exchange)),
      id: "new_user",
      submit: "Log in",
      body: `${field({ id: "user_email", name: "user[email]", label: "Email", type: "email", autocomplete: "email", value: options.email ?? "" })}
${field({ id: "user_password", name: "user[password]", label: "Password", type: "password", autocomplete: "current-password" })}`,
    });
    const rule = policy === null ? "" : `\n<p class="text-muted">${escapeHtml(policy)}</p>`;
    return view("Log in", `<h2>Log in</h2>\n${options.alert ? flash(options.alert) : ""}${form}${rule}\n<a href="/users/password/new">Forgot your password?</a>`);
  }

  function throttled(exchange: Exchange, answer: Throttle, email: string): Reply {
    if (answer.kind === "message") return signInPage(exchange, { email, alert: answer.message });
    const reply = textReply("Retry later\n", 429);
    return { ...reply, headers: { ...reply.headers, ...(answer.retryAfter === undefined ? {} : { "retry-after": answer.retryAfter }) } };
  }

  const routes = new Map<string, Route>([
    ["/", { GET: () => redirectReply("/users/sign_in") }],
    [
      "/users/sign_in",
      {
        GET: (exchange) => (sessions.has(exchange.cookies.get("_ledgerly_session") ?? "") ? redirectReply("/dashboard") : signInPage(exchange)),
        POST: (exchange) => {
          if (!visitors.verifiedId(exchange)) return invalidCsrfReply();
          submissions.push(Date.now());
          const email = exchange.form.get("user[email]")?.trim() ?? "";
          if (throttle) return throttled(exchange, throttle, email);
          if (email.toLowerCase() !== user.email || exchange.form.get("user[password]") !== user.password) {
            return signInPage(exchange, { email, alert: "Invalid Email or password." });
          }
          logins++;
          const token = randomToken();
          sessions.add(token);
          exchange.setCookie("_ledgerly_session", token, "/");
          return redirectReply("/dashboard");
        },
      },
    ],
    [
      "/dashboard",
      {
        GET: (exchange) => {
          if (!sessions.has(exchange.cookies.get("_ledgerly_session") ?? "")) return redirectReply("/users/sign_in");
          const nav = `<span class="account">${escapeHtml(user.email)}</span> <a href="/users/sign_out" data-method="delete">Log out</a>`;
          const shown = notice === null ? "" : `<div class="flash flash-warn" role="alert">${escapeHtml(notice)}</div>\n`;
          return view("Dashboard", `${shown}<h1>Invoices</h1>\n<p>Signed in as ${escapeHtml(user.email)}.</p>`, nav);
        },
      },
    ],
  ]);
  const server = await serveRoutes(routes, handlerClock());
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    loginUrl: `${url}/users/sign_in`,
    user,
    submissions: () => submissions.length,
    submissionTimes: () => [...submissions],
    logins: () => logins,
    changePassword: (password) => void (user.password = password),
    throttle: (answer) => void (throttle = answer),
    dashboardNotice: (message) => void (notice = message),
    signInPolicy: (sentence) => void (policy = sentence),
    expireSessions: () => sessions.clear(),
    stop: server.stop,
  };
}
