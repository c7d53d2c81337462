import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoUser, startDemoSite, type DemoSite } from "../../infra/local/demo-site.ts";
import { totpCode } from "#shared/login/totp.ts";

let site: DemoSite;

beforeAll(async () => {
  site = await startDemoSite(0);
});

afterAll(async () => {
  await site?.stop();
});

/** A visitor with a cookie jar of its own; redirects come back as they are, to be looked at. */
function visitor() {
  const jar = new Map<string, string>();
  async function request(path: string, form?: Record<string, string>) {
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(`${site.url}${path}`, {
      method: form ? "POST" : "GET",
      headers: { cookie, ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}) },
      body: form ? new URLSearchParams(form).toString() : undefined,
      redirect: "manual",
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = header.split(";");
      const [name = "", value = ""] = pair.split("=");
      if (attributes.some((attribute) => attribute.trim() === "Max-Age=0")) jar.delete(name);
      else jar.set(name, value);
    }
    return { status: response.status, location: response.headers.get("location"), html: await response.text() };
  }
  return { request, cookies: () => new Set(jar.keys()) };
}

/** A six-digit code that is neither the current one nor the one before, both of which the site accepts. */
function wrongCode(): string {
  const now = Date.now();
  const accepted = new Set([totpCode(demoUser.totpSecret, new Date(now)), totpCode(demoUser.totpSecret, new Date(now - 30_000)), totpCode(demoUser.totpSecret, new Date(now + 30_000))]);
  return ["000000", "111111", "222222", "333333"].find((code) => !accepted.has(code))!;
}

const rightPassword = { email: demoUser.email, password: demoUser.password };

describe("the demo site npm start serves", () => {
  it("signs the demo user in with the password and then the TOTP code, shows who is signed in, and signs out", async () => {
    const dana = visitor();

    const before = await dana.request("/whoami");
    const loginPage = await dana.request("/login");
    const password = await dana.request("/login", { ...rightPassword, email: ` ${demoUser.email.toUpperCase()} ` });
    const codePage = await dana.request(password.location!);
    const code = await dana.request("/login/code", { code: totpCode(demoUser.totpSecret) });
    const whoAmI = await dana.request(code.location!);
    const loginWhileSignedIn = await dana.request("/login");
    const signOut = await dana.request("/logout");
    const after = await dana.request("/whoami");

    expect(before).toMatchObject({ status: 302, location: "/login" });
    expect(loginPage.html).toMatch(/<input id="email" name="email" type="email"/);
    expect(loginPage.html).toMatch(/<input id="password" name="password" type="password"/);
    expect(password).toMatchObject({ status: 302, location: "/login/code" });
    expect(codePage.html).toContain("authenticator app");
    expect(codePage.html).toContain('autocomplete="one-time-code"');
    expect(code).toMatchObject({ status: 302, location: "/whoami" });
    expect(whoAmI.status).toBe(200);
    expect(whoAmI.html).toContain(`Signed in as ${demoUser.name}`);
    expect(loginWhileSignedIn).toMatchObject({ status: 302, location: "/whoami" });
    expect(signOut).toMatchObject({ status: 302, location: "/login" });
    expect(after).toMatchObject({ status: 302, location: "/login" });
    expect(dana.cookies()).toEqual(new Set());
  });

  it("refuses a wrong email or password on the first step, without a cookie", async () => {
    const stranger = visitor();

    const wrongPassword = await stranger.request("/login", { ...rightPassword, password: "not-the-password" });
    const wrongEmail = await stranger.request("/login", { ...rightPassword, email: "eve@example.com" });
    const codeStep = await stranger.request("/login/code", { code: totpCode(demoUser.totpSecret) });

    for (const refused of [wrongPassword, wrongEmail]) {
      expect(refused.status).toBe(200);
      expect(refused.html).toContain("Incorrect email or password.");
    }
    expect(codeStep).toMatchObject({ status: 302, location: "/login" });
    expect(stranger.cookies()).toEqual(new Set());
  });

  it("refuses a wrong TOTP code and still takes the right one after it", async () => {
    const dana = visitor();
    await dana.request("/login", rightPassword);

    const refused = await dana.request("/login/code", { code: wrongCode() });
    const stillOut = await dana.request("/whoami");
    const accepted = await dana.request("/login/code", { code: totpCode(demoUser.totpSecret) });

    expect(refused.status).toBe(200);
    expect(refused.html).toContain("That code is not right.");
    expect(stillOut).toMatchObject({ status: 302, location: "/login" });
    expect(accepted).toMatchObject({ status: 302, location: "/whoami" });
    expect((await dana.request("/whoami")).html).toContain(`Signed in as ${demoUser.name}`);
  });

  it("answers a form over 16 KiB with 413", async () => {
    const response = await visitor().request("/login", { ...rightPassword, padding: "x".repeat(17 * 1024) });

    expect(response.status).toBe(413);
  });
});
