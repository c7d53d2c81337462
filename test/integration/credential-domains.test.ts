import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerPrompt } from "#shared/domain/reauth.ts";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginEngine, LoginTarget, StepOutcome } from "#shared/login/types.ts";
import { field, page } from "../sites/site-html.ts";
import { handlerClock, htmlReply, randomToken, redirectReply, serveRoutes, textReply, type Reply, type Route } from "../sites/site-http.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";

/**
 * A stored credential is typed only on a page of its own domain, checked by each engine as it types
 * or sends. The site runs as `example.localhost` and `login.example.localhost` (one server; Chromium
 * takes every `*.localhost` for loopback by itself, and the HTTP engine gets a resolver that does the
 * same), and a second server stands for another site, `other.localhost`, in the connection's
 * `allowed_domains`, that writes down every request it gets.
 */
const user = { email: "ada@example.com", password: "correct horse battery" };

function loginForm(action: string, error?: string): Reply {
  const main = `<h1>Sign in</h1>${error ? `<div role="alert" class="alert">${error}</div>` : ""}
<form method="post" action="${action}">
${field({ id: "email", name: "email", label: "Email address", type: "email", autocomplete: "username" })}
${field({ id: "password", name: "password", label: "Password", type: "password", autocomplete: "current-password" })}
<button type="submit">Sign in</button></form>`;
  return htmlReply(page({ brand: "Example", title: "Sign in", main }));
}

let site: Awaited<ReturnType<typeof serveRoutes>>;
let other: Awaited<ReturnType<typeof serveRoutes>>;
/** Every request the other site got, as `METHOD /path`. */
const otherRequests: string[] = [];
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
const engines: Record<string, LoginEngine> = {};

beforeAll(async () => {
  const sessions = new Set<string>();
  const otherRoute = (path: string): Route => ({
    GET: () => {
      otherRequests.push(`GET ${path}`);
      return path === "/login" ? loginForm("/session") : textReply("other site");
    },
    POST: () => {
      otherRequests.push(`POST ${path}`);
      return textReply("other site");
    },
  });
  other = await serveRoutes(new Map([["/login", otherRoute("/login")], ["/session", otherRoute("/session")]]), handlerClock());
  const otherOrigin = `http://other.localhost:${other.port}`;
  site = await serveRoutes(
    new Map<string, Route>([
      // The home host sends visitors to its login host, as many sites do.
      ["/start", { GET: () => redirectReply(`http://login.example.localhost:${site.port}/login`) }],
      ["/login", { GET: () => loginForm("/session") }],
      // A login page of the site whose form posts to the other site.
      ["/posts-away", { GET: () => loginForm(`${otherOrigin}/session`) }],
      // A login handed over to the other site's own login page.
      ["/handed-over", { GET: () => redirectReply(`${otherOrigin}/login`) }],
      // A form whose answer repeats the POST, body and all, to the other site.
      ["/bounces", { GET: () => loginForm("/bounce") }],
      ["/bounce", { POST: () => ({ status: 307, body: "", headers: { location: `${otherOrigin}/session` } }) }],
      [
        "/session",
        {
          POST: (exchange) => {
            if (exchange.form.get("email") !== user.email || exchange.form.get("password") !== user.password) return loginForm("/session", "Incorrect email or password.");
            const session = randomToken();
            sessions.add(session);
            exchange.setCookie("sid", session, "/");
            return redirectReply("/account");
          },
        },
      ],
      [
        "/account",
        {
          GET: (exchange) =>
            sessions.has(exchange.cookies.get("sid") ?? "")
              ? htmlReply(page({ brand: "Example", title: "Account", main: `<p class="who">Signed in as ada</p><a href="/logout">Sign out</a>` }))
              : redirectReply("/login"),
        },
      ],
    ]),
    handlerClock(),
  );
  chromium = await loginChromiumForTests();
  engines.http = createLoginEngine({
    allowPrivateTargets: true,
    resolver: async (host) => {
      if (host.endsWith(".localhost")) return ["127.0.0.1"];
      throw new Error(`the test resolves only *.localhost, not ${host}`);
    },
  });
  engines.browser = createBrowserLoginEngine({ openBrowser: chromium.openBrowser });
}, 120_000);

afterAll(async () => {
  const left = chromium?.running() ?? [];
  await chromium?.dispose();
  await site?.stop();
  await other?.stop();
  expect(left, "Chromium processes left behind by the engine").toEqual([]);
});

const target = (path: string): LoginTarget => ({
  domain: "example.localhost",
  loginUrl: `http://example.localhost:${site.port}${path}`,
  allowedDomains: ["other.localhost"],
});

/** A re-auth as the workflow runs it: every step answered from the credential stored for `credentialDomain`. */
async function reauth(engine: LoginEngine, loginTarget: LoginTarget, credentialDomain: string): Promise<StepOutcome> {
  let outcome = await engine.start(loginTarget);
  const stored = { values: { identifier: user.email, password: user.password }, totpCode: null };
  for (let step = 0; step < 4 && outcome.kind === "input"; step++) {
    const answer = answerPrompt(outcome.prompt, stored);
    if ("blocked" in answer) throw new Error(`the step was not answerable: ${answer.blocked}`);
    outcome = await engine.submit(loginTarget, JSON.parse(JSON.stringify(outcome.state)), answer.submission, { credentialDomain });
  }
  if (outcome.kind === "input") await engine.release(outcome.state);
  return outcome;
}

async function noBrowserLeft(): Promise<void> {
  await eventually(async () => (chromium.running().length === 0 ? true : undefined), "the flow's Chromium to exit", 10);
}

describe.each(["http", "browser"])("the %s engine types a stored credential only on its own domain", (kind) => {
  const engine = () => engines[kind]!;

  it("types it on login.example.localhost after the redirect from example.localhost, and not on the other site its login is handed to", async () => {
    const own = await reauth(engine(), target("/start"), "example.localhost");
    expect(own, JSON.stringify(own)).toMatchObject({ kind: "success", postLoginUrl: `http://login.example.localhost:${site.port}/account` });
    otherRequests.length = 0;

    const handedOver = await reauth(engine(), target("/handed-over"), "example.localhost");

    expect(handedOver).toEqual({
      kind: "failure",
      errorCode: "credential_domain_mismatch",
      message: "the stored credential saved for example.localhost is not typed on or sent to other.localhost, which is outside that domain",
    });
    expect(otherRequests).toEqual(["GET /login"]);
    await noBrowserLeft();
  }, 90_000);

  it("types the other site's own credential there", async () => {
    otherRequests.length = 0;
    await reauth(engine(), target("/handed-over"), "other.localhost");
    expect(otherRequests.slice(0, 2)).toEqual(["GET /login", "POST /session"]);
    await noBrowserLeft();
  }, 90_000);

  it.each([
    ["a form of the site that posts to another site", "/posts-away"],
    ["a redirect that would repeat the credential's POST to another site", "/bounces"],
  ])("refuses %s: the other site gets nothing", async (_, path) => {
    otherRequests.length = 0;

    const outcome = await reauth(engine(), target(path), "example.localhost");

    expect(outcome).toMatchObject({ kind: "failure", errorCode: "credential_domain_mismatch", message: expect.stringContaining("other.localhost") });
    expect(otherRequests).toEqual([]);
    await noBrowserLeft();
  }, 90_000);
});
