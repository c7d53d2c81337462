import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoginSite, type LoginSite } from "../sites/login-site.ts";

let site: LoginSite;

beforeAll(async () => {
  site = await startLoginSite();
});

afterAll(async () => {
  await site.stop();
});

interface Page {
  status: number;
  location: string | null;
  setCookies: string[];
  body: string;
}

/** One visitor on one host: keeps that host's cookies (names are unique per shape, so paths can be ignored). */
function visitor(origin: string) {
  const jar = new Map<string, string>();
  async function request(path: string, form?: Record<string, string>): Promise<Page> {
    const headers: Record<string, string> = { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join("; ") };
    if (form) headers["content-type"] = "application/x-www-form-urlencoded";
    const response = await fetch(new URL(path, origin), {
      method: form ? "POST" : "GET",
      redirect: "manual",
      headers,
      body: form ? new URLSearchParams(form).toString() : undefined,
    });
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [name = "", value = ""] = line.split(";")[0]!.split("=");
      if (/;\s*max-age=0/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return { status: response.status, location: response.headers.get("location"), setCookies, body: await response.text() };
  }
  return {
    jar,
    get: (path: string) => request(path),
    post: (path: string, form: Record<string, string>) => request(path, form),
    /** Posts the form of `page` the way a browser would: with the CSRF token the page rendered. */
    submit: (page: Page, path: string, fields: Record<string, string>) => request(path, { _csrf: csrfTokenOf(page), ...fields }),
  };
}
type Visitor = ReturnType<typeof visitor>;

function csrfTokenOf(page: Page): string {
  const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  if (!token) throw new Error(`no CSRF token on the page:\n${page.body}`);
  return token;
}

async function signInWithPassword(browser: Visitor, shape: string): Promise<Page> {
  const loginPage = await browser.get(`/${shape}/login`);
  return browser.submit(loginPage, `/${shape}/login`, { email: site.user.email, password: site.user.password });
}

async function expectSignedIn(browser: Visitor, shape: string, answer: Page): Promise<Page> {
  expect(answer.status).toBe(302);
  expect(answer.location).toBe(`/${shape}/account`);
  const account = await browser.get(`/${shape}/account`);
  expect(account.status).toBe(200);
  expect(account.body).toContain(`Welcome, ${site.user.email}`);
  expect(account.body).toMatch(new RegExp(`<a href="/${shape}/logout">Sign out</a>`));
  return account;
}

/** A six-digit code that is neither the current nor the previous TOTP. */
function wrongTotp(): string {
  const taken = new Set([site.totp(), site.totp(new Date(Date.now() - 30_000))]);
  let code = 0;
  while (taken.has(String(code).padStart(6, "0"))) code++;
  return String(code).padStart(6, "0");
}

function otherThan(code: string): string {
  return code === "000000" ? "111111" : "000000";
}

describe("login site", () => {
  it("links the home page to the sign-in page", async () => {
    const home = await visitor(site.url).get("/");

    expect(home.status).toBe(200);
    expect(home.body).toContain(`<a href="/plain/login">Sign in</a>`);
  });

  describe("plain", () => {
    it("serves a labelled, autocomplete-annotated form with a CSRF token tied to a pre-session cookie", async () => {
      const page = await visitor(site.url).get("/plain/login");

      expect(page.status).toBe(200);
      expect(page.setCookies).toEqual([expect.stringMatching(/^plain_presession=[\w-]+; Path=\/plain; HttpOnly; SameSite=Lax$/)]);
      expect(page.body).toContain(`<label for="email">`);
      expect(page.body).toMatch(/<input type="email" [^>]*id="email" name="email" [^>]*autocomplete="username"/);
      expect(page.body).toContain(`<label for="password">`);
      expect(page.body).toMatch(/<input type="password" [^>]*name="password" [^>]*autocomplete="current-password"/);
      expect(csrfTokenOf(page)).toMatch(/^[\w-]{20,}$/);
    });

    it("answers 403 to a POST without the token, or with a token but without its cookie", async () => {
      const browser = visitor(site.url);
      const page = await browser.get("/plain/login");
      const credentials = { email: site.user.email, password: site.user.password };

      const withoutToken = await browser.post("/plain/login", credentials);
      const withForeignToken = await visitor(site.url).submit(page, "/plain/login", credentials);
      const withWrongToken = await browser.post("/plain/login", { ...credentials, _csrf: "forged" });

      for (const answer of [withoutToken, withForeignToken, withWrongToken]) {
        expect(answer.status).toBe(403);
        expect(answer.body).toBe("Invalid CSRF token");
        expect(answer.setCookies.some((cookie) => cookie.startsWith("plain_session="))).toBe(false);
      }
      expect(site.logins("plain")).toBe(0);
    });

    it("shows the form again with an alert for a wrong password", async () => {
      const browser = visitor(site.url);
      const page = await browser.get("/plain/login");

      const answer = await browser.submit(page, "/plain/login", { email: site.user.email, password: "wrong horse" });

      expect(answer.status).toBe(200);
      expect(answer.body).toContain(`<div class="alert alert-danger" role="alert">Incorrect email or password.</div>`);
      expect(answer.body).toContain(`value="${site.user.email}"`);
      expect(answer.body).not.toContain("wrong horse");
      expect(csrfTokenOf(answer)).toBe(csrfTokenOf(page));
    });

    it("signs in with a session cookie, writes localStorage on the account page, and signs out", async () => {
      const browser = visitor(site.url);
      const before = site.logins("plain");

      const answer = await signInWithPassword(browser, "plain");

      expect(answer.setCookies).toEqual([expect.stringMatching(/^plain_session=[\w-]+; Path=\/plain; HttpOnly; SameSite=Lax$/)]);
      const account = await expectSignedIn(browser, "plain", answer);
      expect(account.body).toContain(`<script>localStorage.setItem("theme", "dark");</script>`);
      expect(site.logins("plain")).toBe(before + 1);
      expect(await browser.get("/plain/login")).toMatchObject({ status: 302, location: "/plain/account" });

      expect(await browser.get("/plain/logout")).toMatchObject({ status: 302, location: "/plain/login" });
      expect(await browser.get("/plain/account")).toMatchObject({ status: 302, location: "/plain/login" });
    });

    it("sends a visitor without a session from the account page to the login page", async () => {
      expect(await visitor(site.url).get("/plain/account")).toMatchObject({ status: 302, location: "/plain/login" });
    });
  });

  describe("expiry", () => {
    it("logs out every session of one shape through the site object, leaving other shapes signed in", async () => {
      const plain = visitor(site.url);
      const sso = visitor(site.url);
      await signInWithPassword(plain, "plain");
      await signInWithPassword(sso, "sso");

      site.expireSessions("plain");

      const expired = await plain.get("/plain/account");
      expect(expired).toMatchObject({ status: 302, location: "/plain/login" });
      expect(expired.setCookies).toEqual([expect.stringMatching(/^plain_session=; Path=\/plain; Max-Age=0/)]);
      expect((await sso.get("/sso/account")).status).toBe(200);
    });

    it("logs out through POST /_test/expire, for one shape or all", async () => {
      const plain = visitor(site.url);
      const sso = visitor(site.url);
      await signInWithPassword(plain, "plain");
      await signInWithPassword(sso, "sso");

      expect((await plain.post("/_test/expire?shape=plain", {})).status).toBe(204);
      expect((await plain.get("/plain/account")).status).toBe(302);
      expect((await sso.get("/sso/account")).status).toBe(200);

      expect((await plain.post("/_test/expire", {})).status).toBe(204);
      expect((await sso.get("/sso/account")).status).toBe(302);
    });

    it("refuses an unknown shape", async () => {
      const answer = await visitor(site.url).post("/_test/expire?shape=nope", {});

      expect(answer.status).toBe(400);
      expect(answer.body).toContain("unknown shape");
      expect(() => site.expireSessions("nope")).toThrow(/unknown login shape/);
    });
  });

  describe("two-step", () => {
    it("asks for the identifier, then the password on its own page", async () => {
      const browser = visitor(site.url);
      const first = await browser.get("/two-step/login");
      expect(first.body).toContain(`<label for="username">Email or username</label>`);
      expect(first.body).toMatch(/<input type="text" [^>]*name="username" [^>]*autocomplete="username"/);
      expect(first.body).not.toContain(`name="password"`);
      expect(first.body).toContain(">Next</button>");

      const next = await browser.submit(first, "/two-step/login", { username: site.user.email });
      expect(next).toMatchObject({ status: 302, location: "/two-step/password" });

      const second = await browser.get("/two-step/password");
      expect(second.body).toContain(`<strong>${site.user.email}</strong>`);
      expect(second.body).toMatch(/<input type="password" [^>]*name="password" [^>]*autocomplete="current-password"/);
      const wrong = await browser.submit(second, "/two-step/password", { password: "wrong horse" });
      expect(wrong.body).toContain("Incorrect email or password.");

      await expectSignedIn(browser, "two-step", await browser.submit(second, "/two-step/password", { password: site.user.password }));
    });

    it("sends a visitor who skipped the first step back to it", async () => {
      expect(await visitor(site.url).get("/two-step/password")).toMatchObject({ status: 302, location: "/two-step/login" });
    });
  });

  describe("totp", () => {
    it("asks for the authenticator code after the password and accepts only a current one", async () => {
      const browser = visitor(site.url);
      expect(await signInWithPassword(browser, "totp")).toMatchObject({ status: 302, location: "/totp/verify" });
      const verify = await browser.get("/totp/verify");
      expect(verify.body).toContain("Enter the 6-digit code from your authenticator app");
      expect(verify.body).toMatch(/<input [^>]*name="otp" inputmode="numeric" autocomplete="one-time-code" maxlength="6"/);

      const wrong = await browser.submit(verify, "/totp/verify", { otp: wrongTotp() });
      expect(wrong.status).toBe(200);
      expect(wrong.body).toContain(`class="alert alert-danger"`);
      expect(wrong.body).toContain(`name="otp"`);

      await expectSignedIn(browser, "totp", await browser.submit(verify, "/totp/verify", { otp: site.totp() }));
    });

    it("does not show the code page before the password", async () => {
      expect(await visitor(site.url).get("/totp/verify")).toMatchObject({ status: 302, location: "/totp/login" });
    });
  });

  describe("sms", () => {
    it("texts a new code after the password, readable from the site and the test inbox", async () => {
      const browser = visitor(site.url);
      expect(await signInWithPassword(browser, "sms")).toMatchObject({ status: 302, location: "/sms/verify" });
      const verify = await browser.get("/sms/verify");
      expect(verify.body).toContain("We sent a code by text message to (***) ***-1234");
      expect(verify.body).toMatch(/<input [^>]*name="code" [^>]*autocomplete="one-time-code"/);

      const code = site.lastSms("sms");
      expect(code).toMatch(/^\d{6}$/);
      expect(await browser.get("/_test/sms/sms")).toMatchObject({ status: 200, body: code });

      const wrong = await browser.submit(verify, "/sms/verify", { code: otherThan(code!) });
      expect(wrong.body).toContain(`class="alert alert-danger"`);

      await expectSignedIn(browser, "sms", await browser.submit(verify, "/sms/verify", { code: code! }));
    });
  });

  describe("mfa-picker", () => {
    it("lists the three methods as labelled radio buttons and insists on one", async () => {
      const browser = visitor(site.url);
      expect(await signInWithPassword(browser, "mfa-picker")).toMatchObject({ status: 302, location: "/mfa-picker/method" });
      const picker = await browser.get("/mfa-picker/method");

      expect(picker.body).toContain("How do you want to verify?");
      for (const [value, label] of [
        ["sms", "Text message to ***-1234"],
        ["totp", "Authenticator app"],
        ["email", "Email to a***@example.com"],
      ]) {
        expect(picker.body).toContain(`type="radio" name="method" id="method-${value}" value="${value}"`);
        expect(picker.body).toContain(`<label class="form-check-label" for="method-${value}">${label}</label>`);
      }
      expect(picker.body).toContain(">Continue</button>");
      const none = await browser.submit(picker, "/mfa-picker/method", {});
      expect(none.status).toBe(200);
      expect(none.body).toContain("Choose a way to verify.");
    });

    it.each([
      ["sms", () => site.lastSms("mfa-picker")!],
      ["email", () => site.lastEmailCode("mfa-picker")!],
      ["totp", () => site.totp()],
    ])("signs in with the %s code, not with another", async (method, currentCode) => {
      const browser = visitor(site.url);
      await signInWithPassword(browser, "mfa-picker");
      const picker = await browser.get("/mfa-picker/method");

      const picked = await browser.submit(picker, "/mfa-picker/method", { method });
      expect(picked).toMatchObject({ status: 302, location: `/mfa-picker/verify?method=${method}` });
      const verify = await browser.get(picked.location!);
      expect(verify.body).toMatch(/<input [^>]*name="code" [^>]*autocomplete="one-time-code"/);
      expect(verify.body).toContain(`href="/mfa-picker/method">Try another way</a>`);
      const otherCode = method === "totp" ? wrongTotp() : otherThan(currentCode());

      const wrong = await browser.submit(verify, picked.location!, { code: otherCode });
      expect(wrong.status).toBe(200);
      expect(wrong.body).toContain("That code is incorrect.");

      await expectSignedIn(browser, "mfa-picker", await browser.submit(verify, picked.location!, { code: currentCode() }));
    });
  });

  describe("accounts", () => {
    it("asks which account after the password and says which one is signed in", async () => {
      const browser = visitor(site.url);
      expect(await signInWithPassword(browser, "accounts")).toMatchObject({ status: 302, location: "/accounts/choose" });
      const chooser = await browser.get("/accounts/choose");
      expect(chooser.body).toContain("Choose an account");
      expect(chooser.body).toContain(`<button name="account" value="acme">Acme Corp<br><small>ada@acme.example</small></button>`);
      expect(chooser.body).toContain(`<button name="account" value="personal">Personal<br>`);

      const account = await expectSignedIn(browser, "accounts", await browser.submit(chooser, "/accounts/choose", { account: "acme" }));
      expect(account.body).toContain("You are signed in to Acme Corp.");
    });
  });

  describe("sso", () => {
    /** The SSO link on the site's login page, addressed to 127.0.0.1 as the name `localhost` would resolve. */
    async function ssoLink(browser: Visitor): Promise<URL> {
      const loginPage = await browser.get("/sso/login");
      const href = /<a class="btn btn-sso" href="([^"]+)">Sign in with TestSSO<\/a>/.exec(loginPage.body)?.[1];
      expect(href).toBeDefined();
      const link = new URL(href!.replaceAll("&amp;", "&"));
      expect(link.origin).toBe(site.ssoUrl);
      link.hostname = "127.0.0.1";
      return link;
    }

    /** What the provider's sign-in form posts: the authorize request it carries, plus the user's email. */
    function providerForm(link: URL, password: string) {
      return {
        client_id: link.searchParams.get("client_id")!,
        redirect_uri: link.searchParams.get("redirect_uri")!,
        state: link.searchParams.get("state")!,
        email: site.user.email,
        password,
      };
    }

    async function signInAtProvider(provider: Visitor, link: URL): Promise<Page> {
      const page = await provider.get(link.pathname + link.search);
      return provider.submit(page, "/login", providerForm(link, site.user.password));
    }

    it("signs in through the identity provider's own CSRF-protected form and back", async () => {
      const browser = visitor(site.url);
      const link = await ssoLink(browser);
      expect(link.pathname).toBe("/authorize");
      expect(link.searchParams.get("client_id")).toBe("site");
      expect(link.searchParams.get("redirect_uri")).toBe(`${site.url}/sso/callback`);
      const provider = visitor(link.origin);

      const signInPage = await provider.get(link.pathname + link.search);
      expect(signInPage.status).toBe(200);
      expect(signInPage.body).toContain("Sign in to TestSSO");
      expect((await provider.post("/login", providerForm(link, site.user.password))).status).toBe(403);
      expect((await provider.submit(signInPage, "/login", providerForm(link, "wrong horse"))).body).toContain("Incorrect email or password.");

      const back = await provider.submit(signInPage, "/login", providerForm(link, site.user.password));
      expect(back.status).toBe(302);
      expect(provider.jar.has("testsso_session")).toBe(true);
      const callback = new URL(back.location!);
      expect(callback.origin + callback.pathname).toBe(`${site.url}/sso/callback`);
      expect(callback.searchParams.get("state")).toBe(link.searchParams.get("state"));

      const before = site.logins("sso");
      const signedIn = await browser.get(callback.pathname + callback.search);
      await expectSignedIn(browser, "sso", signedIn);
      expect(site.logins("sso")).toBe(before + 1);

      const replayed = await visitor(site.url).get(callback.pathname + callback.search);
      expect(replayed.status).toBe(400);
      expect(replayed.body).toContain("Sign-in with TestSSO failed");
    });

    it("returns straight to the site while the identity provider's session lasts", async () => {
      const browser = visitor(site.url);
      const first = await ssoLink(browser);
      const provider = visitor(first.origin);
      await signInAtProvider(provider, first);

      site.expireSessions("sso");
      const again = await ssoLink(browser);
      const back = await provider.get(again.pathname + again.search);

      expect(back.status).toBe(302);
      const callback = new URL(back.location!);
      await expectSignedIn(browser, "sso", await browser.get(callback.pathname + callback.search));
    });

    it("refuses a callback whose state this visitor was not given, even with a valid code", async () => {
      const victim = visitor(site.url);
      const link = await ssoLink(visitor(site.url));
      const callback = new URL((await signInAtProvider(visitor(link.origin), link)).location!);
      await victim.get("/sso/login");

      const answer = await victim.get(callback.pathname + callback.search);

      expect(answer.status).toBe(400);
      expect(answer.setCookies.some((cookie) => cookie.startsWith("sso_session="))).toBe(false);
    });

    it("refuses an unregistered redirect_uri at the identity provider", async () => {
      const link = await ssoLink(visitor(site.url));
      link.searchParams.set("redirect_uri", "http://127.0.0.1:1/steal");

      const answer = await visitor(link.origin).get(link.pathname + link.search);

      expect(answer.status).toBe(400);
      expect(answer.body).toContain("redirect_uri is not registered");
    });

    it("also signs in with the password form", async () => {
      const browser = visitor(site.url);

      await expectSignedIn(browser, "sso", await signInWithPassword(browser, "sso"));
    });
  });

  describe("captcha", () => {
    it("shows a captcha and never lets even the right password through", async () => {
      const browser = visitor(site.url);
      const page = await browser.get("/captcha/login");
      expect(page.body).toContain(`<div class="g-recaptcha" data-sitekey="test-key"></div>`);
      expect(page.body).toContain("Please verify you are human");

      const answer = await browser.submit(page, "/captcha/login", { email: site.user.email, password: site.user.password });

      expect(answer.status).toBe(200);
      expect(answer.body).toContain("Captcha verification failed");
      expect(answer.body).toContain(`class="g-recaptcha"`);
      expect(answer.setCookies).toEqual([]);
      expect(site.logins("captcha")).toBe(0);
      expect((await browser.post("/captcha/login", {})).status).toBe(403);
    });
  });

  it("counts its own handler time and resets the count", async () => {
    site.resetServerTime();
    expect(site.serverTimeMs()).toBe(0);

    await visitor(site.url).get("/plain/login");

    expect(site.serverTimeMs()).toBeGreaterThan(0);
    site.resetServerTime();
    expect(site.serverTimeMs()).toBe(0);
  });
});
