import { createServer } from "node:http";
import { strFromU8, unzipSync } from "fflate";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import { replayMask, startReplay, stopReplay } from "#shared/login/browser/replay.ts";
import type { LoginTarget } from "#shared/login/types.ts";
import { handlerClock, htmlReply, listenOnLoopback, randomToken, serveRoutes, textReply, type Route } from "../sites/site-http.ts";
import { asInput, asSuccess, submitThroughJson } from "../support/engine-steps.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { replayLeaks } from "../support/replay-leaks.ts";

const email = "ada@example.com";
const password = "correct horse";
const basicCredential = Buffer.from(`${email}:${password}`).toString("base64");
const apiToken = randomToken();

/**
 * A single-page app whose script signs in with `Authorization: Basic`, receives its API token as a
 * cookie it can read, and calls the API with `Authorization: Bearer` (and the cookie).
 */
const appPage = `<!doctype html>
<title>App</title>
<form id="signin"><input id="email" name="email"><input id="password" name="password" type="password"><button>Sign in</button></form>
<p id="out"></p>
<script>
document.querySelector("#signin").addEventListener("submit", async (event) => {
  event.preventDefault();
  const basic = btoa(document.querySelector("#email").value + ":" + document.querySelector("#password").value);
  await fetch("/api/login", { method: "POST", headers: { authorization: "Basic " + basic } });
  const token = document.cookie.split("api=")[1];
  const me = await fetch("/api/me", { headers: { authorization: "Bearer " + token } });
  document.querySelector("#out").textContent = await me.text();
});
</script>`;

const server = createServer((request, response) => {
  if (request.url === "/api/login" && request.headers.authorization === `Basic ${basicCredential}`) {
    response.writeHead(204, { "set-cookie": `api=${apiToken}; Path=/; SameSite=Lax` }).end();
  } else if (request.url === "/api/me" && request.headers.authorization === `Bearer ${apiToken}`) {
    response.writeHead(200, { "content-type": "text/plain" }).end("Welcome back");
  } else if (request.url === "/") {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(appPage);
  } else {
    response.writeHead(401).end();
  }
});

/**
 * A bank-style login drawn by script: an email, a password and a memorable word (a plain text box),
 * sent to an API whose answer the page keeps as its session, a token in localStorage and an
 * MSAL-style JSON entry in sessionStorage.
 */
const memorableWord = `Harbour & "Tide" <1852>`;
const storedToken = randomToken();
const sessionToken = randomToken();
const bankPage = `<!doctype html>
<title>Bank</title>
<div id="root"><h1>Sign in to your bank</h1>
<label>Email <input id="email" name="email" type="email" autocomplete="username"></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password"></label>
<label>Memorable word <input id="memorable" name="memorable" type="text" required></label>
<button type="button" id="go">Sign in</button></div>
<script>
document.querySelector("#go").addEventListener("click", async () => {
  const body = new URLSearchParams({ email: email.value, password: password.value, memorable: memorable.value });
  const answer = await fetch("/bank/api/session", { method: "POST", body });
  if (!answer.ok) return;
  const session = await answer.json();
  localStorage.setItem("token", session.token);
  sessionStorage.setItem("msal.account", JSON.stringify({ secret: session.sessionToken, username: email.value }));
  history.pushState(null, "", "/bank/accounts");
  document.querySelector("#root").innerHTML = "<h1>Your accounts</h1><p>Current account</p>";
});
</script>`;
const bankRoutes = new Map<string, Route>([
  ["/bank/login", { GET: () => htmlReply(bankPage) }],
  [
    "/bank/api/session",
    {
      POST: (exchange) =>
        exchange.form.get("email") === email && exchange.form.get("password") === password && exchange.form.get("memorable") === memorableWord
          ? { status: 200, body: JSON.stringify({ token: storedToken, sessionToken }), headers: { "content-type": "application/json" } }
          : textReply("no", 401),
    },
  ],
]);

let site: Awaited<ReturnType<typeof listenOnLoopback>>;
let bank: Awaited<ReturnType<typeof serveRoutes>>;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let browser: Browser | undefined;

beforeAll(async () => {
  site = await listenOnLoopback(server);
  bank = await serveRoutes(bankRoutes, handlerClock());
  chromium = await loginChromiumForTests();
});

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  expect(chromium?.running() ?? []).toEqual([]);
  await chromium?.dispose();
  await site?.stop();
  await bank?.stop();
});

describe("a flow's replay", () => {
  it("keeps no credential a header or a cookie carried, and no screencast frame", async () => {
    browser = await chromium.launch();
    const context = await browser.newContext();
    await startReplay(context);
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${site.port}/`);
    await page.fill("#email", email);
    await page.fill("#password", password);
    await page.click("button");
    await page.locator("#out", { hasText: "Welcome back" }).waitFor();
    // The engine reads the browser's state before the trace stops, as it does at a flow's end.
    expect((await context.storageState()).cookies).toContainEqual(expect.objectContaining({ name: "api", value: apiToken }));

    const entries = unzipSync(await stopReplay(context, [email, password]));

    const leaks = Object.entries(entries).flatMap(([name, data]) =>
      [basicCredential, apiToken, password].filter((secret) => Buffer.from(data).includes(secret)).map((secret) => `${name} holds ${secret}`),
    );
    expect(leaks).toEqual([]);
    expect(Object.keys(entries).filter((name) => name.startsWith("screencast/"))).toEqual([]);
    expect(strFromU8(entries["trace.trace"]!)).not.toContain('"screencast-frame"');
    const requests = strFromU8(entries["trace.network"]!)
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { snapshot?: { request: { url: string; headers: { name: string; value: string }[] } } })
      .flatMap((event) => (event.snapshot ? [event.snapshot.request] : []));
    const apiCall = requests.find((request) => request.url.endsWith("/api/me"));
    expect(apiCall?.headers).toEqual(
      expect.arrayContaining([
        { name: expect.stringMatching(/^authorization$/i), value: replayMask },
        { name: expect.stringMatching(/^cookie$/i), value: replayMask },
      ]),
    );
  });

  it("of a browser login keeps no value typed into a text field and no value the page kept in localStorage or sessionStorage, in any form", async () => {
    const traces: Buffer[] = [];
    const engine = createBrowserLoginEngine({
      openBrowser: chromium.openBrowser,
      saveReplay: async (_target, zip) => {
        traces.push(zip);
        return "rp_test";
      },
    });
    const target: LoginTarget = { domain: "127.0.0.1", loginUrl: `http://127.0.0.1:${bank.port}/bank/login`, allowedDomains: [], recordSession: true };

    const step = asInput(await engine.start(target));
    const idOf = (type: string) => step.prompt.fields.find((field) => field.type === type)?.id as string;
    const done = asSuccess(await submitThroughJson(engine, target, step, { field_values: { [idOf("identifier")]: email, [idOf("password")]: password, [idOf("text")]: memorableWord } }));

    // The engine read the page's storage: the session it keeps holds both tokens.
    const origin = done.session.origins.find((each) => each.origin === `http://127.0.0.1:${bank.port}`);
    expect(origin?.localStorage).toContainEqual({ name: "token", value: storedToken });
    expect(JSON.stringify(origin?.sessionStorage)).toContain(sessionToken);
    expect(done.replayId).toBe("rp_test");
    expect(traces).toHaveLength(1);
    const trace = traces[0]!;
    expect(strFromU8(unzipSync(trace)["trace.trace"]!)).toContain('"method":"fill"');
    expect(replayLeaks(trace, { "memorable word": memorableWord, password, "localStorage token": storedToken, "sessionStorage token": sessionToken })).toEqual([]);
  });
});
