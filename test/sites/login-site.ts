import { randomInt } from "node:crypto";
import { generateTotpSecret, totpCode, totpMatches } from "#shared/secrets/totp.ts";
import { alertDanger, escapeHtml, field, page, postForm } from "./site-html.ts";
import {
  handlerClock,
  htmlReply,
  invalidCsrfReply,
  preSessions,
  randomToken,
  redirectReply,
  serveRoutes,
  textReply,
  type Exchange,
  type Handler,
  type PreSessions,
  type Reply,
  type Route,
} from "./site-http.ts";
import { startTestSso, type TestSso } from "./test-sso.ts";

/**
 * A small website of our own for the login engine's tests and the end-to-end tests: one login shape
 * per path prefix (`/plain`, `/two-step`, ... see `loginShapes`), each with its own session cookie,
 * plus "TestSSO" on a second port. Everything is in memory and listens on 127.0.0.1 only.
 */

export interface LoginSite {
  /** http://127.0.0.1:<port>: the main site. Connections use domain "127.0.0.1". */
  url: string;
  /** http://localhost:<port2>: "TestSSO", a second host the engine must reach as `localhost` resolved to 127.0.0.1. */
  ssoUrl: string;
  /** The one test user, the same for every shape. */
  user: { email: string; password: string; totpSecret: string; phone: string };
  /** Latest SMS / email code sent to the user for `shape` (undefined if none). */
  lastSms(shape: string): string | undefined;
  lastEmailCode(shape: string): string | undefined;
  /** Invalidates every session of `shape` (or of all shapes): the next request with an old cookie is logged out. */
  expireSessions(shape?: string): void;
  /** Successful logins per shape. */
  logins(shape: string): number;
  /** Password forms posted, right or wrong: to the site's own login pages, and to TestSSO's. */
  passwordsPosted(): { site: number; sso: number };
  /** Milliseconds both hosts spent in their own request handlers since the last reset. */
  serverTimeMs(): number;
  resetServerTime(): void;
  /** The user's current TOTP (SHA-1, 30 s, 6 digits), as an authenticator app would show it. */
  totp(at?: Date): string;
  stop(): Promise<void>;
}

export const loginShapes = ["plain", "two-step", "totp", "sms", "mfa-picker", "accounts", "sso", "captcha"] as const;
export type LoginShape = (typeof loginShapes)[number];

type CodeChannel = "sms" | "email";
type VerifyMethod = CodeChannel | "totp";

/** A visitor's progress through a login before a session exists, keyed by shape and pre-session cookie. */
interface Flow {
  /** Two-step: what was typed on the first page. */
  identifier?: string;
  /** The password was right; a second step is pending. */
  verifiedEmail?: string;
  codes: Partial<Record<CodeChannel, string>>;
  ssoStates: Set<string>;
}

interface Session {
  shape: LoginShape;
  email: string;
  account?: AccountId;
}

const brand = "Pinecone";
const accounts = {
  acme: { name: "Acme Corp", email: "ada@acme.example" },
  personal: { name: "Personal", email: "ada@example.com" },
};
type AccountId = keyof typeof accounts;
const wrongCredentials = "Incorrect email or password.";

export async function startLoginSite(): Promise<LoginSite> {
  const user = { email: "ada@example.com", password: "correct horse", totpSecret: generateTotpSecret(), phone: "+1 555 0100 1234" };
  const clock = handlerClock();
  // Routes are added once both hosts listen: the site links to the SSO host, which must know the site's callback.
  const routes = new Map<string, Route>();
  const server = await serveRoutes(routes, clock);
  const url = `http://127.0.0.1:${server.port}`;
  const sso = await startTestSso({ user, clientId: "site", redirectUri: `${url}/sso/callback`, clock });

  const state = {
    visitors: Object.fromEntries(loginShapes.map((shape) => [shape, preSessions(`${shape}_presession`, `/${shape}`)])) as Record<LoginShape, PreSessions>,
    flows: new Map<string, Flow>(),
    sessions: new Map<string, Session>(),
    loginCounts: new Map<LoginShape, number>(),
    passwordPosts: 0,
    lastCodes: new Map<string, string>(),
  };
  for (const [path, route] of siteRoutes({ user, url, sso, state })) routes.set(path, route);

  const knownShape = (shape: string): LoginShape => {
    if (!isShape(shape)) throw new Error(`unknown login shape "${shape}"; the shapes are ${loginShapes.join(", ")}`);
    return shape;
  };
  return {
    url,
    ssoUrl: sso.url,
    user,
    lastSms: (shape) => state.lastCodes.get(`sms/${shape}`),
    lastEmailCode: (shape) => state.lastCodes.get(`email/${shape}`),
    expireSessions: (shape) => expireSessions(state.sessions, shape === undefined ? undefined : knownShape(shape)),
    logins: (shape) => state.loginCounts.get(knownShape(shape)) ?? 0,
    passwordsPosted: () => ({ site: state.passwordPosts, sso: sso.signInsPosted() }),
    serverTimeMs: clock.totalMs,
    resetServerTime: clock.reset,
    totp: (at) => totpCode(user.totpSecret, at),
    stop: async () => {
      await Promise.all([server.stop(), sso.stop()]);
    },
  };
}

interface SiteContext {
  user: LoginSite["user"];
  url: string;
  sso: TestSso;
  state: {
    visitors: Record<LoginShape, PreSessions>;
    flows: Map<string, Flow>;
    sessions: Map<string, Session>;
    loginCounts: Map<LoginShape, number>;
    passwordPosts: number;
    lastCodes: Map<string, string>;
  };
}

function siteRoutes({ user, url, sso, state }: SiteContext): Map<string, Route> {
  const phoneLast4 = user.phone.replace(/\D/g, "").slice(-4);
  const maskedEmail = `${user.email[0]}***@${user.email.split("@")[1]}`;
  const methods: Record<VerifyMethod, { choice: string; prompt: string }> = {
    sms: { choice: `Text message to ***-${phoneLast4}`, prompt: `Enter the code we sent by text message to ***-${phoneLast4}` },
    totp: { choice: "Authenticator app", prompt: "Enter the 6-digit code from your authenticator app" },
    email: { choice: `Email to ${maskedEmail}`, prompt: `Enter the code we emailed to ${maskedEmail}` },
  };

  const flowOf = (shape: LoginShape, visitorId: string): Flow => {
    const key = `${shape}/${visitorId}`;
    const flow = state.flows.get(key) ?? { codes: {}, ssoStates: new Set<string>() };
    state.flows.set(key, flow);
    return flow;
  };
  const visitingFlow = (exchange: Exchange, shape: LoginShape) => flowOf(shape, state.visitors[shape].idOf(exchange));
  const csrfToken = (exchange: Exchange, shape: LoginShape) => state.visitors[shape].csrfToken(state.visitors[shape].idOf(exchange));
  const sessionOf = (exchange: Exchange, shape: LoginShape) => state.sessions.get(exchange.cookies.get(`${shape}_session`) ?? "");

  /** A POST handler that runs only with a CSRF token matching the visitor's pre-session cookie. */
  const csrfChecked =
    (shape: LoginShape, handle: (exchange: Exchange, flow: Flow) => Reply): Handler =>
    (exchange) => {
      const visitorId = state.visitors[shape].verifiedId(exchange);
      return visitorId ? handle(exchange, flowOf(shape, visitorId)) : invalidCsrfReply();
    };
  /** A handler of a form that carries a password, counted whatever it answers. */
  const countedPasswordPost =
    (handle: Handler): Handler =>
    (exchange) => {
      state.passwordPosts++;
      return handle(exchange);
    };
  /** A second-step handler: without an accepted password the visitor goes back to the login page. */
  const afterPassword =
    (shape: LoginShape, handle: (exchange: Exchange, flow: Flow & { verifiedEmail: string }) => Reply) =>
    (exchange: Exchange, flow: Flow) =>
      flow.verifiedEmail ? handle(exchange, { ...flow, verifiedEmail: flow.verifiedEmail }) : redirectReply(`/${shape}/login`);

  function signIn(exchange: Exchange, shape: LoginShape, email: string, account?: AccountId): Reply {
    const token = randomToken();
    state.sessions.set(token, { shape, email, account });
    state.loginCounts.set(shape, (state.loginCounts.get(shape) ?? 0) + 1);
    state.flows.delete(`${shape}/${exchange.cookies.get(`${shape}_presession`)}`);
    exchange.setCookie(`${shape}_session`, token, `/${shape}`);
    return redirectReply(`/${shape}/account`);
  }

  function sendCode(shape: LoginShape, flow: Flow, channel: CodeChannel): void {
    const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
    flow.codes[channel] = code;
    state.lastCodes.set(`${channel}/${shape}`, code);
  }

  const matchesUser = (identifier: string | null) => identifier?.trim().toLowerCase() === user.email;
  const matchesPassword = (password: string | null) => password === user.password;

  const view = (title: string, main: string, options: { nav?: string; script?: string } = {}) =>
    htmlReply(page({ brand, title, main, ...options }));

  const emailPasswordFields = (email: string) =>
    `${field({ id: "email", name: "email", label: "Email address", type: "email", autocomplete: "username", value: email, autofocus: !email })}
${field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password", autofocus: !!email })}`;

  function loginPage(exchange: Exchange, shape: LoginShape, options: { email?: string; error?: string } = {}): Reply {
    const email = options.email ?? "";
    const captcha = `<p>Please verify you are human</p>
<div class="g-recaptcha" data-sitekey="test-key"></div>`;
    const form = postForm({
      action: `/${shape}/login`,
      csrfToken: csrfToken(exchange, shape),
      id: "login-form",
      submit: "Sign in",
      body: shape === "captcha" ? `${emailPasswordFields(email)}\n${captcha}` : emailPasswordFields(email),
    });
    return view("Sign in", `<h1>Sign in to your account</h1>\n${alertDanger(options.error)}${form}${shape === "sso" ? ssoButton(exchange) : ""}`);
  }

  function ssoButton(exchange: Exchange): string {
    const ssoState = randomToken();
    visitingFlow(exchange, "sso").ssoStates.add(ssoState);
    const authorize = new URL("/authorize", sso.url);
    authorize.search = new URLSearchParams({ client_id: "site", redirect_uri: `${url}/sso/callback`, state: ssoState }).toString();
    return `\n<p class="divider">or</p>\n<a class="btn btn-sso" href="${escapeHtml(authorize.href)}">Sign in with TestSSO</a>`;
  }

  const nextStep: Partial<Record<LoginShape, (flow: Flow) => string>> = {
    totp: () => "/totp/verify",
    sms: (flow) => {
      sendCode("sms", flow, "sms");
      return "/sms/verify";
    },
    "mfa-picker": () => "/mfa-picker/method",
    accounts: () => "/accounts/choose",
  };

  const passwordLogin = (shape: LoginShape): Route => ({
    GET: (exchange) => (sessionOf(exchange, shape) ? redirectReply(`/${shape}/account`) : loginPage(exchange, shape)),
    POST: countedPasswordPost(csrfChecked(shape, (exchange, flow) => {
      const email = exchange.form.get("email")?.trim() ?? "";
      if (!matchesUser(email) || !matchesPassword(exchange.form.get("password"))) {
        return loginPage(exchange, shape, { email, error: wrongCredentials });
      }
      const next = nextStep[shape];
      if (!next) return signIn(exchange, shape, user.email);
      flow.verifiedEmail = user.email;
      flow.codes = {};
      return redirectReply(next(flow));
    })),
  });

  function codePage(exchange: Exchange, shape: LoginShape, options: { action: string; prompt: string; name: string; label: string; error?: string; footer?: string }) {
    const form = postForm({
      action: options.action,
      csrfToken: csrfToken(exchange, shape),
      submit: "Verify",
      body: field({ id: options.name, name: options.name, label: options.label, type: "text", inputmode: "numeric", autocomplete: "one-time-code", maxlength: 6, autofocus: true }),
    });
    return view("Verify", `<h1>Two-step verification</h1>\n<p>${escapeHtml(options.prompt)}</p>\n${alertDanger(options.error)}${form}${options.footer ?? ""}`);
  }

  const totpPage = (exchange: Exchange, error?: string) =>
    codePage(exchange, "totp", { action: "/totp/verify", prompt: methods.totp.prompt, name: "otp", label: "Authentication code", error });
  const smsPage = (exchange: Exchange, error?: string) =>
    codePage(exchange, "sms", { action: "/sms/verify", prompt: `We sent a code by text message to (***) ***-${phoneLast4}`, name: "code", label: "Verification code", error });

  function twoStepIdentifierPage(exchange: Exchange, error?: string): Reply {
    const form = postForm({
      action: "/two-step/login",
      csrfToken: csrfToken(exchange, "two-step"),
      submit: "Next",
      body: field({ id: "username", name: "username", label: "Email or username", type: "text", autocomplete: "username", autofocus: true }),
    });
    return view("Sign in", `<h1>Sign in</h1>\n${alertDanger(error)}${form}`);
  }

  function twoStepPasswordPage(exchange: Exchange, identifier: string, error?: string): Reply {
    const form = postForm({
      action: "/two-step/password",
      csrfToken: csrfToken(exchange, "two-step"),
      submit: "Sign in",
      body: field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password", autofocus: true }),
    });
    const who = `<p>Signing in as <strong>${escapeHtml(identifier)}</strong> · <a href="/two-step/login">Not you?</a></p>`;
    return view("Enter your password", `<h1>Enter your password</h1>\n${who}\n${alertDanger(error)}${form}`);
  }

  function methodPage(exchange: Exchange, error?: string): Reply {
    const options = (Object.keys(methods) as VerifyMethod[]).map(
      (method) => `<div class="form-check">
  <input class="form-check-input" type="radio" name="method" id="method-${method}" value="${method}">
  <label class="form-check-label" for="method-${method}">${escapeHtml(methods[method].choice)}</label>
</div>`,
    );
    const form = postForm({ action: "/mfa-picker/method", csrfToken: csrfToken(exchange, "mfa-picker"), submit: "Continue", body: options.join("\n") });
    return view("Verify it's you", `<h1>How do you want to verify?</h1>\n${alertDanger(error)}${form}`);
  }

  function pickedMethodPage(exchange: Exchange, method: VerifyMethod, error?: string): Reply {
    return codePage(exchange, "mfa-picker", {
      action: `/mfa-picker/verify?method=${method}`,
      prompt: methods[method].prompt,
      name: "code",
      label: method === "totp" ? "Authentication code" : "Verification code",
      error,
      footer: `\n<p><a href="/mfa-picker/method">Try another way</a></p>`,
    });
  }

  function accountChooserPage(exchange: Exchange, error?: string): Reply {
    const buttons = (Object.keys(accounts) as AccountId[]).map(
      (id) => `<button name="account" value="${id}">${escapeHtml(accounts[id].name)}<br><small>${escapeHtml(accounts[id].email)}</small></button>`,
    );
    const form = postForm({ action: "/accounts/choose", csrfToken: csrfToken(exchange, "accounts"), body: buttons.join("\n") });
    return view("Choose an account", `<h1>Choose an account</h1>\n${alertDanger(error)}${form}`);
  }

  const codeMatches = (method: VerifyMethod, flow: Flow, typed: string) =>
    method === "totp" ? totpMatches(user.totpSecret, typed) : flow.codes[method] !== undefined && typed.trim() === flow.codes[method];
  const pickedMethod = (exchange: Exchange) => {
    const method = exchange.query.get("method");
    return method && method in methods ? (method as VerifyMethod) : undefined;
  };
  const pendingGet = (shape: LoginShape, handle: (exchange: Exchange, flow: Flow & { verifiedEmail: string }) => Reply): Handler => (exchange) =>
    afterPassword(shape, handle)(exchange, visitingFlow(exchange, shape));
  /** The code page after the password: the right code in `field` signs in, any other shows the page again with `wrongCode`. */
  const codeStep = (shape: "totp" | "sms", field: string, codePageOf: (exchange: Exchange, error?: string) => Reply, wrongCode: string): Route => ({
    GET: pendingGet(shape, (exchange) => codePageOf(exchange)),
    POST: csrfChecked(
      shape,
      afterPassword(shape, (exchange, flow) =>
        codeMatches(shape, flow, exchange.form.get(field) ?? "") ? signIn(exchange, shape, flow.verifiedEmail) : codePageOf(exchange, wrongCode),
      ),
    ),
  });

  const routes = new Map<string, Route>([
    [
      "/",
      {
        GET: () =>
          view("Home", `<h1>Welcome to Pinecone</h1>\n<p>Outdoor gear, shipped fast. Sign in to see your orders.</p>\n<p><a class="btn btn-primary" href="/plain/login">Sign in</a></p>`, {
            nav: `<a href="/plain/login">Sign in</a>`,
          }),
      },
    ],
    ["/plain/login", passwordLogin("plain")],
    [
      "/two-step/login",
      {
        GET: (exchange) => (sessionOf(exchange, "two-step") ? redirectReply("/two-step/account") : twoStepIdentifierPage(exchange)),
        POST: csrfChecked("two-step", (exchange, flow) => {
          const identifier = exchange.form.get("username")?.trim();
          if (!identifier) return twoStepIdentifierPage(exchange, "Enter your email or username.");
          flow.identifier = identifier;
          return redirectReply("/two-step/password");
        }),
      },
    ],
    [
      "/two-step/password",
      {
        GET: (exchange) => {
          const identifier = visitingFlow(exchange, "two-step").identifier;
          return identifier ? twoStepPasswordPage(exchange, identifier) : redirectReply("/two-step/login");
        },
        POST: csrfChecked("two-step", (exchange, flow) => {
          if (!flow.identifier) return redirectReply("/two-step/login");
          const knownUser = matchesUser(flow.identifier) || flow.identifier.toLowerCase() === user.email.split("@")[0];
          if (!knownUser || !matchesPassword(exchange.form.get("password"))) return twoStepPasswordPage(exchange, flow.identifier, wrongCredentials);
          return signIn(exchange, "two-step", user.email);
        }),
      },
    ],
    ["/totp/login", passwordLogin("totp")],
    ["/totp/verify", codeStep("totp", "otp", totpPage, "Invalid authentication code. Please try again.")],
    ["/sms/login", passwordLogin("sms")],
    ["/sms/verify", codeStep("sms", "code", smsPage, "That code is incorrect. Check the message and try again.")],
    ["/mfa-picker/login", passwordLogin("mfa-picker")],
    [
      "/mfa-picker/method",
      {
        GET: pendingGet("mfa-picker", (exchange) => methodPage(exchange)),
        POST: csrfChecked(
          "mfa-picker",
          afterPassword("mfa-picker", (exchange) => {
            const method = exchange.form.get("method");
            return method && method in methods ? redirectReply(`/mfa-picker/verify?method=${method}`) : methodPage(exchange, "Choose a way to verify.");
          }),
        ),
      },
    ],
    [
      "/mfa-picker/verify",
      {
        GET: (exchange) => {
          const method = pickedMethod(exchange);
          const flow = visitingFlow(exchange, "mfa-picker");
          if (!method || !flow.verifiedEmail) return redirectReply(flow.verifiedEmail ? "/mfa-picker/method" : "/mfa-picker/login");
          if (method !== "totp" && !flow.codes[method]) sendCode("mfa-picker", flow, method);
          return pickedMethodPage(exchange, method);
        },
        POST: csrfChecked(
          "mfa-picker",
          afterPassword("mfa-picker", (exchange, flow) => {
            const method = pickedMethod(exchange);
            if (!method) return redirectReply("/mfa-picker/method");
            return codeMatches(method, flow, exchange.form.get("code") ?? "")
              ? signIn(exchange, "mfa-picker", flow.verifiedEmail)
              : pickedMethodPage(exchange, method, "That code is incorrect. Please try again.");
          }),
        ),
      },
    ],
    ["/accounts/login", passwordLogin("accounts")],
    [
      "/accounts/choose",
      {
        GET: pendingGet("accounts", (exchange) => accountChooserPage(exchange)),
        POST: csrfChecked(
          "accounts",
          afterPassword("accounts", (exchange, flow) => {
            const account = exchange.form.get("account");
            return account && account in accounts
              ? signIn(exchange, "accounts", flow.verifiedEmail, account as AccountId)
              : accountChooserPage(exchange, "Choose an account to continue.");
          }),
        ),
      },
    ],
    ["/sso/login", passwordLogin("sso")],
    [
      "/sso/callback",
      {
        GET: (exchange) => {
          const flow = visitingFlow(exchange, "sso");
          const ssoState = exchange.query.get("state") ?? "";
          const email = flow.ssoStates.delete(ssoState) ? sso.redeem(exchange.query.get("code") ?? "", `${url}/sso/callback`) : undefined;
          if (email) return signIn(exchange, "sso", email);
          const main = `<h1>Sign-in failed</h1>\n${alertDanger("Sign-in with TestSSO failed. Please try again.")}<p><a href="/sso/login">Back to sign in</a></p>`;
          return htmlReply(page({ brand, title: "Sign-in failed", main }), 400);
        },
      },
    ],
    [
      "/captcha/login",
      {
        GET: passwordLogin("captcha").GET,
        POST: csrfChecked("captcha", (exchange) => loginPage(exchange, "captcha", { email: exchange.form.get("email")?.trim(), error: "Captcha verification failed" })),
      },
    ],
    [
      "/_test/expire",
      {
        POST: (exchange) => {
          const shape = exchange.query.get("shape");
          if (shape !== null && !isShape(shape)) return textReply(`unknown shape; the shapes are ${loginShapes.join(", ")}`, 400);
          expireSessions(state.sessions, shape ?? undefined);
          return { status: 204, body: "" };
        },
      },
    ],
  ]);

  for (const shape of loginShapes) {
    routes.set(`/${shape}/account`, {
      GET: (exchange) => {
        const session = sessionOf(exchange, shape);
        if (!session) {
          if (exchange.cookies.has(`${shape}_session`)) exchange.clearCookie(`${shape}_session`, `/${shape}`);
          return redirectReply(`/${shape}/login`);
        }
        const which = session.account ? `<p>You are signed in to ${escapeHtml(accounts[session.account].name)}.</p>\n` : "";
        return view("Your account", `<h1>Welcome, ${escapeHtml(session.email)}</h1>\n${which}<p><a href="/${shape}/logout">Sign out</a></p>`, {
          nav: `<a href="/${shape}/logout">Sign out</a>`,
          script: shape === "plain" ? `localStorage.setItem("theme", "dark");` : undefined,
        });
      },
    });
    routes.set(`/${shape}/logout`, {
      GET: (exchange) => {
        state.sessions.delete(exchange.cookies.get(`${shape}_session`) ?? "");
        exchange.clearCookie(`${shape}_session`, `/${shape}`);
        return redirectReply(`/${shape}/login`);
      },
    });
    for (const channel of ["sms", "email"] as const) {
      routes.set(`/_test/${channel}/${shape}`, {
        GET: () => {
          const code = state.lastCodes.get(`${channel}/${shape}`);
          return code ? textReply(code) : textReply(`no ${channel} code sent for ${shape}`, 404);
        },
      });
    }
  }
  return routes;
}

function isShape(value: string): value is LoginShape {
  return (loginShapes as readonly string[]).includes(value);
}

function expireSessions(sessions: Map<string, Session>, shape: LoginShape | undefined): void {
  for (const [token, session] of sessions) if (shape === undefined || session.shape === shape) sessions.delete(token);
}
