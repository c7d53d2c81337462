import { alertDanger, escapeHtml, field, page, postForm } from "./site-html.ts";
import {
  htmlReply,
  invalidCsrfReply,
  preSessions,
  randomToken,
  redirectReply,
  serveRoutes,
  type Exchange,
  type HandlerClock,
  type Reply,
  type Route,
} from "./site-http.ts";

/**
 * "TestSSO": an OAuth-style identity provider on its own host. It knows one client (the login site)
 * with one registered redirect URI, keeps its own sign-in session, and hands out single-use codes
 * that the site redeems in-process (standing in for the back-channel token request).
 */

export interface TestSso {
  url: string;
  /** The email a code was issued for, once; undefined for an unknown, used, expired or misdirected code. */
  redeem(code: string, redirectUri: string): string | undefined;
  /** Sign-in forms posted to it (each carries a password), right or wrong. */
  signInsPosted(): number;
  stop(): Promise<void>;
}

interface SsoOptions {
  user: { email: string; password: string };
  clientId: string;
  redirectUri: string;
  clock: HandlerClock;
}

interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  state: string | null;
}

const brand = "TestSSO";
const sessionCookie = "testsso_session";
const codeLifetimeMs = 60_000;

export async function startTestSso(options: SsoOptions): Promise<TestSso> {
  const visitors = preSessions("testsso_presession", "/");
  const sessions = new Map<string, string>();
  const codes = new Map<string, { email: string; redirectUri: string; expiresAt: number }>();
  let signInsPosted = 0;

  function authorizeRequest(params: URLSearchParams): AuthorizeRequest | Reply {
    if (params.get("client_id") !== options.clientId) return errorPage("Unknown client_id.");
    if (params.get("redirect_uri") !== options.redirectUri) return errorPage("redirect_uri is not registered for this client.");
    return { clientId: options.clientId, redirectUri: options.redirectUri, state: params.get("state") };
  }

  function returnToClient(request: AuthorizeRequest, email: string): Reply {
    const code = randomToken();
    codes.set(code, { email, redirectUri: request.redirectUri, expiresAt: Date.now() + codeLifetimeMs });
    const target = new URL(request.redirectUri);
    target.searchParams.set("code", code);
    if (request.state !== null) target.searchParams.set("state", request.state);
    return redirectReply(target.href);
  }

  function signInPage(exchange: Exchange, request: AuthorizeRequest, error?: string, email = ""): Reply {
    const hidden = [
      `<input type="hidden" name="client_id" value="${escapeHtml(request.clientId)}">`,
      `<input type="hidden" name="redirect_uri" value="${escapeHtml(request.redirectUri)}">`,
      request.state === null ? "" : `<input type="hidden" name="state" value="${escapeHtml(request.state)}">`,
    ].join("\n");
    const form = postForm({
      action: "/login",
      csrfToken: visitors.csrfToken(visitors.idOf(exchange)),
      submit: "Sign in",
      body: `${hidden}
${field({ id: "sso-email", name: "email", label: "Work email", type: "email", autocomplete: "username", value: email, autofocus: !email })}
${field({ id: "sso-password", name: "password", label: "Password", type: "password", autocomplete: "current-password", autofocus: !!email })}`,
    });
    const main = `<h1>Sign in to TestSSO</h1>
<p>to continue to ${escapeHtml(new URL(request.redirectUri).host)}</p>
${alertDanger(error)}${form}`;
    return htmlReply(page({ brand, title: "Sign in", main }));
  }

  const routes = new Map<string, Route>([
    ["/", { GET: () => htmlReply(page({ brand, title: "Identity", main: "<h1>TestSSO</h1><p>Single sign-on for your organization.</p>" })) }],
    [
      "/authorize",
      {
        GET: (exchange) => {
          const request = authorizeRequest(exchange.query);
          if (!isAuthorizeRequest(request)) return request;
          const email = sessions.get(exchange.cookies.get(sessionCookie) ?? "");
          return email ? returnToClient(request, email) : signInPage(exchange, request);
        },
      },
    ],
    [
      "/login",
      {
        POST: (exchange) => {
          signInsPosted++;
          if (!visitors.verifiedId(exchange)) return invalidCsrfReply();
          const request = authorizeRequest(exchange.form);
          if (!isAuthorizeRequest(request)) return request;
          const email = exchange.form.get("email")?.trim().toLowerCase() ?? "";
          if (email !== options.user.email || exchange.form.get("password") !== options.user.password) {
            return signInPage(exchange, request, "Incorrect email or password.", email);
          }
          const session = randomToken();
          sessions.set(session, email);
          exchange.setCookie(sessionCookie, session, "/");
          return returnToClient(request, email);
        },
      },
    ],
  ]);
  const server = await serveRoutes(routes, options.clock);

  return {
    url: `http://localhost:${server.port}`,
    redeem(code, redirectUri) {
      const issued = codes.get(code);
      codes.delete(code);
      if (!issued || issued.redirectUri !== redirectUri || issued.expiresAt < Date.now()) return undefined;
      return issued.email;
    },
    signInsPosted: () => signInsPosted,
    stop: server.stop,
  };
}

function isAuthorizeRequest(value: AuthorizeRequest | Reply): value is AuthorizeRequest {
  return "clientId" in value;
}

function errorPage(message: string): Reply {
  return htmlReply(page({ brand, title: "Error", main: `<h1>Something went wrong</h1>\n${alertDanger(message)}` }), 400);
}
