import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoUser, startDemoSite, type DemoSite } from "../../infra/local/demo-site.ts";
import { totpCode } from "#shared/secrets/totp.ts";
import { rawHttpExchange } from "../support/raw-requests.ts";

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

/** POSTs a chunked form of up to `maxBytes`, with backpressure, until the site closes the connection. */
function sendEndlessForm(maxBytes: number): Promise<{ sentBytes: number; answer: string }> {
  const { hostname, port, host } = new URL(site.url);
  const chunk = Buffer.from(`4000\r\n${"x".repeat(0x4000)}\r\n`);
  return new Promise((done) => {
    let sentBytes = 0;
    let answer = "";
    const socket = connect(Number(port), hostname, async () => {
      socket.write(`POST /login HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n`);
      while (sentBytes < maxBytes && !socket.destroyed) {
        sentBytes += 0x4000;
        if (!socket.write(chunk)) await new Promise((drained) => socket.once("drain", drained).once("close", drained));
      }
      if (!socket.destroyed) socket.end("0\r\n\r\n");
    });
    socket.setEncoding("utf8");
    socket.on("data", (data: string) => (answer += data));
    // A reset is how a closed connection shows to a writer that kept writing.
    socket.on("error", () => undefined);
    socket.once("close", () => done({ sentBytes, answer }));
  });
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

  it("cuts off a form over 16 KiB, whether its length is declared or it keeps coming, and keeps serving", async () => {
    const declared = await visitor()
      .request("/login", { ...rightPassword, padding: "x".repeat(17 * 1024) })
      .then(() => "answered", () => "cut off");
    const streamed = await sendEndlessForm(64 * 1024 * 1024);

    expect(declared).toBe("cut off");
    expect(streamed.answer).toBe("");
    expect(streamed.sentBytes).toBeLessThan(64 * 1024 * 1024);
    expect((await visitor().request("/login")).status).toBe(200);
  });

  it("answers a request target that is not a URL with 400 and keeps serving", async () => {
    const host = new URL(site.url).host;

    const answer = await rawHttpExchange(site.url, `GET http://[ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);

    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await visitor().request("/login")).status).toBe(200);
  });

  it("refuses a request for another host name: a page elsewhere cannot rebind its name to the site", async () => {
    const port = new URL(site.url).port;

    const rebound = await rawHttpExchange(site.url, `GET /whoami HTTP/1.1\r\nHost: attacker.example:${port}\r\nConnection: close\r\n\r\n`);
    const byName = await rawHttpExchange(site.url, `GET /login HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`);

    expect(rebound).toMatch(/^HTTP\/1\.1 400 /);
    expect(byName).toMatch(/^HTTP\/1\.1 200 /);
  });

  it("keeps the newest 100 visitors owing a code and the newest 100 sessions, dropping the oldest", async () => {
    const first = visitor();
    await first.request("/login", rightPassword);
    const firstSignedIn = visitor();
    await firstSignedIn.request("/login", rightPassword);
    await firstSignedIn.request("/login/code", { code: totpCode(demoUser.totpSecret) });
    const signedInLater = Array.from({ length: 100 }, () => visitor());
    const owingCodeLater = Array.from({ length: 100 }, () => visitor());

    for (const next of signedInLater) {
      await next.request("/login", rightPassword);
      await next.request("/login/code", { code: totpCode(demoUser.totpSecret) });
    }
    for (const next of owingCodeLater) await next.request("/login", rightPassword);

    expect(await first.request("/login/code")).toMatchObject({ status: 302, location: "/login" });
    expect(await firstSignedIn.request("/whoami")).toMatchObject({ status: 302, location: "/login" });
    expect((await owingCodeLater[0]!.request("/login/code")).status).toBe(200);
    expect((await signedInLater[0]!.request("/whoami")).status).toBe(200);
  });
});
