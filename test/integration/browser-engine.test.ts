import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContextWithState } from "#shared/login/browser/browser-state.ts";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import { launchLoginBrowser } from "#shared/login/browser/chromium.ts";
import { startPolicyProxy, type PolicyProxy } from "#shared/login/browser/network-policy-proxy.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import { generateTotpSecret, totpCode, totpMatches } from "#shared/secrets/totp.ts";
import type { LoginEngine, LoginTarget, StepOutcome, Submission } from "#shared/login/types.ts";
import { scriptShapes, startScriptSites, type ScriptSites } from "../sites/script-sites.ts";
import { escapeHtml } from "../sites/site-html.ts";
import { browserPid, commandLineOf, loginChromiumForTests } from "../support/login-chromium.ts";
import { eventually } from "../support/poll.ts";
import { handlerClock, htmlReply, redirectReply, serveRoutes, textReply, type Exchange, type Route } from "../sites/site-http.ts";
import { asInput, asSuccess, submitThroughJson, type Input, type Success } from "../support/engine-steps.ts";
import { patientMs } from "../support/patience.ts";

/**
 * Small script-built login pages, each a shape the HTTP engine cannot log in to: a form drawn by
 * script with no <form> and a token in localStorage, a form revealed by a "Log in" button, and an
 * identifier-first login inside a shadow root with an MFA picker and a TOTP step that keeps its
 * session in sessionStorage.
 */
const user = { email: "ada@example.com", password: "correct horse battery", name: "ada" };
const totpSecret = generateTotpSecret();

function fixtureRoutes(): Map<string, Route> {
  const tokens = new Set<string>();
  const token = () => {
    const value = randomBytes(16).toString("hex");
    tokens.add(value);
    return value;
  };
  const bearer = (exchange: Exchange, header: string | undefined) => header !== undefined && tokens.has(header) && exchange.method === "GET";
  const spaPage = htmlReply(`<!doctype html><title>Acme App</title><div id="root">Loading…</div>
<script>
const root = document.getElementById("root");
function dashboard(name) {
  root.innerHTML = '<header><span class="user">Signed in as <b id="who"></b></span> <button id="out">Sign out</button></header><main><h1>Dashboard</h1></main>';
  document.getElementById("who").textContent = name;
}
function loginForm(error) {
  root.innerHTML = '<main><h1>Sign in to Acme</h1>' + (error ? '<div role="alert" class="error">' + error + '</div>' : '') +
    '<div class="card"><label>Email <input id="em" type="email" autocomplete="username"></label>' +
    '<label>Password <input id="pw" type="password" autocomplete="current-password"></label>' +
    '<button type="button" id="go">Sign in</button></div></main>';
  document.getElementById("go").addEventListener("click", async () => {
    const body = new URLSearchParams({ email: document.getElementById("em").value, password: document.getElementById("pw").value });
    const answer = await fetch("/spa/api/login", { method: "POST", body });
    if (!answer.ok) return loginForm("Incorrect email or password.");
    localStorage.setItem("token", await answer.text());
    history.pushState(null, "", "/spa/home");
    dashboard("ada");
  });
}
setTimeout(async () => {
  const token = localStorage.getItem("token");
  const me = token ? await fetch("/spa/api/me?token=" + token) : null;
  if (me && me.ok) dashboard(await me.text()); else loginForm(null);
}, 30);
</script>`);

  // A login drawn by script whose inputs have neither name nor id, drawn anew (new elements) after a
  // wrong password; it keeps the token in localStorage and never leaves the page.
  const namelessPage = `<!doctype html><title>Acme</title><div id="root"></div>
<script>
const root = document.getElementById("root");
function loginForm(error) {
  root.innerHTML = '<main><h1>Sign in</h1>' + (error ? '<p role="alert">' + error + '</p>' : '') +
    '<div class="card"><label>Email <input type="email" autocomplete="username"></label>' +
    '<label>Password <input type="password" autocomplete="current-password"></label><button type="button">Sign in</button></div></main>';
  const [email, password] = root.querySelectorAll("input");
  root.querySelector("button").addEventListener("click", async () => {
    const answer = await fetch("/spa/api/login", { method: "POST", body: new URLSearchParams({ email: email.value, password: password.value }) });
    if (!answer.ok) return loginForm("Incorrect email or password.");
    localStorage.setItem("token", await answer.text());
    root.innerHTML = '<main><h1>Dashboard</h1><p>Signed in</p></main>';
  });
}
loginForm(null);
</script>`;

  const idFirstScript = `
customElements.define("acme-login", class extends HTMLElement {
  connectedCallback() {
    this.root = this.attachShadow({ mode: "open" });
    this.identifierStep(null);
  }
  show(html, onSubmit) {
    this.root.innerHTML = '<form>' + html + '</form>';
    this.root.querySelector("form").addEventListener("submit", (event) => { event.preventDefault(); onSubmit(new FormData(event.target)); });
  }
  async post(path, data) {
    const answer = await fetch(path, { method: "POST", body: new URLSearchParams(data) });
    return { ok: answer.ok, text: await answer.text() };
  }
  identifierStep() {
    this.show('<h2>Sign in</h2><label for="identifier">Email</label><input id="identifier" name="identifier" type="email" autocomplete="username"><button>Continue</button>',
      async (data) => { this.identifier = data.get("identifier"); this.passwordStep(null); });
  }
  passwordStep(error) {
    this.show('<h2>Enter your password</h2>' + (error ? '<p class="error">' + error + '</p>' : '') + '<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password"><button>Sign in</button>',
      async (data) => {
        const answer = await this.post("/idfirst/api/password", { identifier: this.identifier, password: data.get("password") });
        if (answer.ok) this.pickerStep(); else this.passwordStep("Wrong password. Try again.");
      });
  }
  pickerStep() {
    this.show('<h2>How do you want to verify it\\'s you?</h2><label><input type="radio" name="method" value="totp"> Authenticator app</label><label><input type="radio" name="method" value="email"> Email a code to a***@example.com</label><button>Continue</button>',
      (data) => this.codeStep(data.get("method")));
  }
  codeStep(method) {
    this.show('<h2>Two-step verification</h2><label for="code">Enter the code from your authenticator app</label><input id="code" name="code" inputmode="numeric" maxlength="6" autocomplete="one-time-code"><button>Verify</button>',
      async (data) => {
        const answer = await this.post("/idfirst/api/verify", { identifier: this.identifier, code: data.get("code") });
        if (!answer.ok) return this.codeStep(method);
        sessionStorage.setItem("idfirst_token", answer.text);
        location.href = "/idfirst/home";
      });
  }
});`;

  return new Map<string, Route>([
    ["/spa/login", { GET: () => spaPage }],
    ["/spa/home", { GET: () => spaPage }],
    [
      "/spa/api/login",
      {
        POST: (exchange) =>
          exchange.form.get("email") === user.email && exchange.form.get("password") === user.password ? textReply(token()) : textReply("no", 401),
      },
    ],
    ["/nameless/login", { GET: () => htmlReply(namelessPage) }],
    // The same login served with 401, as some single-page apps serve every page to a visitor without a session.
    ["/walled/login", { GET: () => htmlReply(namelessPage, 401) }],
    [
      "/leaves/login",
      {
        GET: (exchange) =>
          htmlReply(`<!doctype html><title>Sign in</title><form method="post" action="${escapeHtml(exchange.query.get("to") ?? "")}">
<input name="email" type="email"><input name="password" type="password"><button>Sign in</button></form>`),
      },
    ],
    ["/spa/api/me", { GET: (exchange) => (bearer(exchange, exchange.query.get("token") ?? undefined) ? textReply(user.name) : textReply("no", 401)) }],
    [
      "/reveal/",
      {
        GET: () =>
          htmlReply(`<!doctype html><title>Shop</title><header><nav><button id="open" type="button">Log in</button></nav></header>
<main><h1>Welcome to the shop</h1><div id="dialog" style="display:none">
<form method="post" action="/reveal/session"><label for="u">Username</label><input id="u" name="username" autocomplete="username">
<label for="p">Password</label><input id="p" name="password" type="password"><button>Log in</button></form></div></main>
<script>document.getElementById("open").onclick = () => { document.getElementById("dialog").style.display = "block"; };</script>`),
      },
    ],
    [
      "/reveal/session",
      {
        POST: (exchange) => {
          if (exchange.form.get("username") !== user.email || exchange.form.get("password") !== user.password) return redirectReply("/reveal/");
          exchange.setCookie("reveal_session", token(), "/reveal");
          return redirectReply("/reveal/account");
        },
      },
    ],
    [
      "/reveal/account",
      {
        GET: (exchange) =>
          tokens.has(exchange.cookies.get("reveal_session") ?? "")
            ? htmlReply(`<!doctype html><title>Your account</title><header><a href="/reveal/logout">Log out</a></header><main><h1>Orders</h1></main>`)
            : redirectReply("/reveal/"),
      },
    ],
    ["/nothing/", { GET: () => htmlReply(`<!doctype html><title>About us</title><main><h1>About</h1><p>We sell things.</p><button>Menu</button></main>`) }],
    [
      "/captcha/login",
      {
        GET: () =>
          htmlReply(`<!doctype html><title>Sign in</title><form method="post"><input name="email" type="email"><input name="password" type="password">
<div class="g-recaptcha" data-sitekey="x"></div><button>Sign in</button></form>`),
      },
    ],
    ["/idfirst/login", { GET: () => htmlReply(`<!doctype html><title>Acme ID</title><main><acme-login></acme-login></main><script>${idFirstScript}</script>`) }],
    [
      "/idfirst/api/password",
      { POST: (exchange) => (exchange.form.get("identifier") === user.email && exchange.form.get("password") === user.password ? textReply("ok") : textReply("no", 401)) },
    ],
    [
      "/idfirst/api/verify",
      { POST: (exchange) => (exchange.form.get("identifier") === user.email && totpMatches(totpSecret, exchange.form.get("code") ?? "") ? textReply(token()) : textReply("no", 401)) },
    ],
    [
      "/idfirst/home",
      {
        GET: () =>
          htmlReply(`<!doctype html><title>Acme</title><main id="main">Loading…</main><script>
const token = sessionStorage.getItem("idfirst_token");
fetch("/idfirst/api/me?token=" + token).then(async (answer) => {
  document.getElementById("main").innerHTML = answer.ok ? '<p class="who">Signed in as ' + await answer.text() + '</p><button>Log out</button>' : '<a href="/idfirst/login">Sign in</a>';
});</script>`),
      },
    ],
    ["/idfirst/api/me", { GET: (exchange) => (bearer(exchange, exchange.query.get("token") ?? undefined) ? textReply(user.name) : textReply("no", 401)) }],
  ]);
}

let site: Awaited<ReturnType<typeof serveRoutes>>;
let siteUrl: string;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let engine: LoginEngine;

beforeAll(async () => {
  site = await serveRoutes(fixtureRoutes(), handlerClock());
  siteUrl = `http://127.0.0.1:${site.port}`;
  chromium = await loginChromiumForTests();
  engine = createBrowserLoginEngine({ openBrowser: chromium.openBrowser });
}, patientMs(120_000));

afterAll(async () => {
  const left = chromium?.running() ?? [];
  await chromium?.dispose();
  await site?.stop();
  expect(left, "Chromium processes left behind by the engine").toEqual([]);
});

const target = (path: string): LoginTarget => ({ domain: "127.0.0.1", loginUrl: `${siteUrl}${path}`, allowedDomains: [] });

const answer = (loginTarget: LoginTarget, step: Input, submission: Submission) => submitThroughJson(engine, loginTarget, step, submission);

/** The file's Chromium executable, as its running process names it, for a browser launched behind a proxy. */
/** Every flow's browser is closed once its flow ended. */
async function noBrowserLeft(): Promise<void> {
  await eventually(async () => (chromium.running().length === 0 ? true : undefined), "the flow's Chromium to exit", 10);
}

/** Opens `url` in a new browser with `session` loaded and returns the page's text once `expected` shows. */
async function textWithSession(session: Success["session"], url: string, expected: string): Promise<string> {
  const browser = await chromium.launch();
  try {
    const context = await openContextWithState(browser, session);
    const page = await context.newPage();
    await page.goto(url);
    await page.getByText(expected).first().waitFor({ timeout: patientMs(10_000) });
    return await page.locator("body").innerText();
  } finally {
    await browser.close();
  }
}

/** Whether `selector` finds exactly one element in the page as a new browser renders it. */
async function findsOne(url: string, selector: string): Promise<boolean> {
  const browser = await chromium.launch();
  try {
    const page = await browser.newPage();
    await page.goto(url);
    await page.locator(selector).first().waitFor({ timeout: patientMs(10_000) });
    return (await page.locator(selector).count()) === 1;
  } finally {
    await browser.close();
  }
}

describe("browser login engine", () => {
  it("finds a form built by script that the HTTP engine cannot see, and logs in with a token in localStorage", async () => {
    const httpStart = await createLoginEngine({ allowPrivateTargets: true }).start(target("/spa/login"));
    expect(httpStart).toMatchObject({ kind: "failure", errorCode: "login_form_not_found" });

    const first = asInput(await engine.start(target("/spa/login")));
    expect(first.browserSessionId).toMatch(/^bs_/);
    expect(first.prompt.fields.map((field) => [field.id, field.type, field.observed_selector])).toEqual([
      ["identifier", "identifier", "#em"],
      ["password", "password", "#pw"],
    ]);
    expect(first.prompt.discovered_fields.map((field) => field.selector)).toEqual(["#em", "#pw"]);

    const rejected = asInput(await answer(target("/spa/login"), first, { field_values: { identifier: user.email, password: "wrong horse" } }));
    expect(rejected.websiteError).toBe("Incorrect email or password.");
    expect(rejected.browserSessionId).toBe(first.browserSessionId);

    const success = asSuccess(await answer(target("/spa/login"), rejected, { field_values: { identifier: user.email, password: user.password } }));
    expect(success).toMatchObject({ engine: "browser", postLoginUrl: `${siteUrl}/spa/home`, requirements: ["identifier", "password"], ssoProvider: null });
    expect(success.durableValues).toEqual({ identifier: user.email, password: user.password });
    expect(success.session.cookies).toEqual([]);
    expect(success.session.origins).toContainEqual(expect.objectContaining({ origin: siteUrl, localStorage: [expect.objectContaining({ name: "token" })] }));
    expect(success.evidence.basis).toBe("verified");
    await noBrowserLeft();

    expect(await textWithSession(success.session, `${siteUrl}/spa/home`, "Signed in as")).toContain("Signed in as ada");
  }, patientMs(90_000));

  it("ends a third wrong password in a row with credentials_invalid and closes the browser", async () => {
    let step = asInput(await engine.start(target("/spa/login")));
    for (let attempt = 1; attempt < 3; attempt++) {
      step = asInput(await answer(target("/spa/login"), step, { field_values: { identifier: user.email, password: `wrong ${attempt}` } }));
      expect(step.websiteError).toBe("Incorrect email or password.");
    }
    const third = await answer(target("/spa/login"), step, { field_values: { identifier: user.email, password: "wrong 3" } });
    expect(third).toMatchObject({ kind: "failure", errorCode: "credentials_invalid" });
    expect(JSON.stringify(third)).not.toContain("wrong 3");
    await noBrowserLeft();
  }, patientMs(90_000));

  it("clicks the page's Log in button to reveal its form, and keeps the session cookie", async () => {
    const first = asInput(await engine.start(target("/reveal/")));
    expect(first.prompt.fields.map((field) => [field.id, field.observed_selector])).toEqual([
      ["identifier", "#u"],
      ["password", "#p"],
    ]);
    const success = asSuccess(await answer(target("/reveal/"), first, { field_values: { identifier: user.email, password: user.password } }));
    expect(success.postLoginUrl).toBe(`${siteUrl}/reveal/account`);
    expect(success.session.cookies).toContainEqual(expect.objectContaining({ name: "reveal_session", path: "/reveal" }));
    expect(success.evidence.sessionCookies).toEqual(["reveal_session"]);
    await noBrowserLeft();
  }, patientMs(90_000));

  it("logs in identifier first inside a shadow root, through an MFA picker and a TOTP step, keeping sessionStorage", async () => {
    const loginTarget = target("/idfirst/login");
    const identifier = asInput(await engine.start(loginTarget));
    expect(identifier.prompt.fields.map((field) => field.type)).toEqual(["identifier"]);
    expect(await findsOne(loginTarget.loginUrl!, identifier.prompt.fields[0]!.observed_selector!)).toBe(true);

    const password = asInput(await answer(loginTarget, identifier, { field_values: { identifier: user.email } }));
    expect(password.prompt.fields.map((field) => field.type)).toEqual(["password"]);
    const rejected = asInput(await answer(loginTarget, password, { field_values: { password: "nope" } }));
    expect(rejected.websiteError).toBe("Wrong password. Try again.");

    const picker = asInput(await answer(loginTarget, rejected, { field_values: { password: user.password } }));
    expect(picker.prompt.mfa_options.map((option) => option.type).sort()).toEqual(["email", "totp"]);
    expect(picker.prompt.mfa_options.find((option) => option.type === "email")?.target).toBe("a***@example.com");

    const code = asInput(await answer(loginTarget, picker, { mfa_option_id: "totp" }));
    expect(code.prompt.fields.map((field) => field.type)).toEqual(["totp_code"]);

    const success = asSuccess(await answer(loginTarget, code, { field_values: { totp_code: totpCode(totpSecret) } }));
    expect(success.postLoginUrl).toBe(`${siteUrl}/idfirst/home`);
    expect(success.requirements).toEqual(["identifier", "password", "choice", "totp_code"]);
    expect(success.session.origins).toContainEqual(expect.objectContaining({ origin: siteUrl, sessionStorage: [expect.objectContaining({ name: "idfirst_token" })] }));
    await noBrowserLeft();

    expect(await textWithSession(success.session, `${siteUrl}/idfirst/home`, "Signed in as")).toContain("Signed in as ada");
  }, patientMs(120_000));

  it("ends without a login form, an unreachable site or a captcha in a failure, each closing its browser", async () => {
    expect(await engine.start(target("/nothing/"))).toMatchObject({ kind: "failure", errorCode: "login_form_not_found" });
    const closed = await serveRoutes(new Map(), handlerClock());
    await closed.stop();
    const unreachable = await engine.start({ domain: "127.0.0.1", loginUrl: `http://127.0.0.1:${closed.port}/login`, allowedDomains: [] });
    expect(unreachable).toMatchObject({ kind: "failure", errorCode: "site_unreachable" });
    expect(await engine.start(target("/captcha/login"))).toMatchObject({ kind: "failure", errorCode: "captcha_blocked" });
    await noBrowserLeft();
  }, patientMs(90_000));

  it("ends a third wrong password with credentials_invalid where the form, without names or ids, is drawn anew each time", async () => {
    const loginTarget = target("/nameless/login");
    let step = asInput(await engine.start(loginTarget));
    expect(step.prompt.fields.map((field) => field.type)).toEqual(["identifier", "password"]);
    for (let attempt = 1; attempt < 3; attempt++) {
      step = asInput(await answer(loginTarget, step, { field_values: { identifier: user.email, password: `wrong ${attempt}` } }));
      expect(step.websiteError).toBe("Incorrect email or password.");
    }
    expect(await answer(loginTarget, step, { field_values: { identifier: user.email, password: "wrong 3" } })).toMatchObject({
      kind: "failure",
      errorCode: "credentials_invalid",
    });
    await noBrowserLeft();
  }, patientMs(90_000));

  it("logs in on a page first served with 401 whose script signs in without loading another page", async () => {
    const loginTarget = target("/walled/login");
    const first = asInput(await engine.start(loginTarget));
    const success = asSuccess(await answer(loginTarget, first, { field_values: { identifier: user.email, password: user.password } }));
    expect(success.session.origins).toContainEqual(expect.objectContaining({ origin: siteUrl, localStorage: [expect.objectContaining({ name: "token" })] }));
    await noBrowserLeft();
  }, patientMs(90_000));

  it("ends a login whose form leaves the connection's sites with unsupported_auth_method, as the HTTP engine does, over http and https", async () => {
    const { executablePath } = chromium;
    const proxies: PolicyProxy[] = [];
    const pids: number[] = [];
    const behindProxy = createBrowserLoginEngine({
      async openBrowser(openedFor) {
        const proxy = await startPolicyProxy({ target: openedFor, allowPrivateTargets: true });
        proxies.push(proxy);
        const browser = await launchLoginBrowser({ executablePath, proxyServer: proxy.server });
        pids.push(await browserPid(browser));
        return {
          browser,
          refused: () => proxy.refused(),
          async close() {
            await browser.close();
            await proxy.close();
          },
        };
      },
    });
    const httpEngine = createLoginEngine({ allowPrivateTargets: true });
    const credentials: Submission = { field_values: { identifier: user.email, password: user.password } };
    for (const elsewhere of [`http://elsewhere.test:${site.port}/session`, "https://elsewhere.test/session"]) {
      const loginTarget = target(`/leaves/login?to=${encodeURIComponent(elsewhere)}`);

      const inBrowser = await behindProxy.submit(loginTarget, asInput(await behindProxy.start(loginTarget)).state, credentials);
      const overHttp = await httpEngine.submit(loginTarget, asInput(await httpEngine.start(loginTarget)).state, credentials);

      expect(inBrowser, elsewhere).toMatchObject({ kind: "failure", errorCode: "unsupported_auth_method", message: expect.stringContaining("elsewhere.test is outside") });
      expect(overHttp, elsewhere).toMatchObject({ kind: "failure", errorCode: "unsupported_auth_method" });
    }
    expect(proxies.flatMap((proxy) => proxy.refused())).toEqual([
      expect.stringMatching(new RegExp(`^elsewhere\\.test:${site.port}: elsewhere\\.test is outside`)),
      expect.stringMatching(/^elsewhere\.test:443: elsewhere\.test is outside/),
    ]);
    await eventually(async () => (pids.every((pid) => commandLineOf(pid) === undefined) ? true : undefined), "the flows' Chromium to exit", 10);
  }, patientMs(90_000));

  it("release closes the flow's browser, and a later submit resumes in a new browser with the answers given", async () => {
    const loginTarget = target("/idfirst/login");
    const identifier = asInput(await engine.start(loginTarget));
    const password = asInput(await answer(loginTarget, identifier, { field_values: { identifier: user.email } }));
    await engine.release(password.state);
    await noBrowserLeft();

    const picker = asInput(await answer(loginTarget, password, { field_values: { password: user.password } }));
    expect(picker.browserSessionId).not.toBe(password.browserSessionId);
    expect(picker.prompt.mfa_options.map((option) => option.type).sort()).toEqual(["email", "totp"]);
    await engine.release(picker.state);
    await noBrowserLeft();
  }, patientMs(120_000));
});

describe("browser login engine on the script-built test sites", () => {
  let sites: ScriptSites;

  beforeAll(async () => {
    sites = await startScriptSites();
  });

  afterAll(async () => {
    await sites?.stop();
  });

  /** Answers each step as the account's owner would: who, the password, the authenticator's code, TOTP where a method is picked. */
  function ownersAnswer(step: Input): Submission {
    const values: Record<string, string> = {};
    for (const field of step.prompt.fields) {
      if (field.type === "identifier") values[field.id] = sites.user.email;
      else if (field.type === "password") values[field.id] = sites.user.password;
      else if (field.type === "totp_code") values[field.id] = totpCode(sites.user.totpSecret);
    }
    if (Object.keys(values).length > 0) return { field_values: values };
    expect(step.prompt.mfa_options.map((option) => option.type), JSON.stringify(step.prompt)).toContain("totp");
    return { mfa_option_id: "totp" };
  }

  it.each(scriptShapes)("%s: reaches success, and the captured state opens the site signed in", async (shape) => {
    const loginTarget: LoginTarget = { domain: "127.0.0.1", loginUrl: sites.loginUrl(shape), allowedDomains: [] };
    let outcome = await engine.start(loginTarget);
    const asked: string[][] = [];
    for (let steps = 0; outcome.kind === "input" && steps < 6; steps++) {
      asked.push(outcome.prompt.fields.map((field) => field.type));
      outcome = await engine.submit(loginTarget, JSON.parse(JSON.stringify(outcome.state)), ownersAnswer(outcome));
    }
    const success = asSuccess(outcome);
    expect(asked[0], JSON.stringify(asked)).toContain(shape === "idfirst" ? "identifier" : "password");
    expect(success.postLoginUrl).toBe(sites.homeUrl(shape));
    await noBrowserLeft();
    expect(await textWithSession(success.session, sites.homeUrl(shape), sites.user.name)).toContain(sites.user.name);
  }, patientMs(90_000));

  it("inline: a wrong password is asked again with the site's words, the third ends credentials_invalid", async () => {
    const loginTarget: LoginTarget = { domain: "127.0.0.1", loginUrl: sites.loginUrl("inline"), allowedDomains: [] };
    let step = asInput(await engine.start(loginTarget));
    for (let attempt = 1; attempt < 3; attempt++) {
      step = asInput(await answer(loginTarget, step, { field_values: { identifier: sites.user.email, password: `wrong ${attempt}` } }));
      expect(step.websiteError).toBe("Incorrect email or password.");
    }
    expect(await answer(loginTarget, step, { field_values: { identifier: sites.user.email, password: "wrong 3" } })).toMatchObject({
      kind: "failure",
      errorCode: "credentials_invalid",
    });
    await noBrowserLeft();
  }, patientMs(90_000));
});
