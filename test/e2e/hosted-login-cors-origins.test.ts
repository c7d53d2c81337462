import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { openEmbeddingApp, startEmbeddingApp } from "../sites/embedded-login/page.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { startTestStack } from "../support/stack.ts";

declare const window: { embeddedLogin: { attempt(url: string, init: Record<string, unknown>): Promise<{ status?: number; failed?: string }> } };

let allowedApp: Awaited<ReturnType<typeof startEmbeddingApp>>;
let otherApp: Awaited<ReturnType<typeof startEmbeddingApp>>;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let browser: Browser | undefined;

beforeAll(async () => {
  // Two apps on two ports of 127.0.0.1: two origins, only the first one allowed.
  allowedApp = await startEmbeddingApp();
  otherApp = await startEmbeddingApp();
  // Read when the stack's handlers first build their configuration, after this line.
  vi.stubEnv("ALLOWED_ORIGINS", allowedApp.url);
  stack = await startTestStack();
  chromium = await loginChromiumForTests();
});

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  await chromium?.dispose();
  await stack?.stop();
  await otherApp?.stop();
  await allowedApp?.stop();
  vi.unstubAllEnvs();
});

/** From a page of `appUrl`, in a browser with web security on: a JSON exchange call, which needs a preflight. */
async function exchangeFrom(appUrl: string) {
  browser ??= await chromium.launch();
  const page = await openEmbeddingApp(browser, appUrl);
  return page.evaluate(
    (url) => window.embeddedLogin.attempt(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code: "not-a-code" }) }),
    `${stack.url}/auth/connections/ac_1/exchange`,
  );
}

describe("ALLOWED_ORIGINS naming one origin", () => {
  it("lets a page of that origin call the exchange and read its answer, and a page of another origin not", async () => {
    const allowed = await exchangeFrom(allowedApp.url);
    const refused = await exchangeFrom(otherApp.url);

    expect(allowed).toEqual({ status: 401 });
    expect(refused.failed).toMatch(/TypeError/);
  });

  it("echoes an allowed origin in the preflight and answers, and leaves Allow-Origin out for another", async () => {
    const preflight = (origin: string) =>
      fetch(`${stack.url}/auth/connections/ac_1/submit`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
    const exchange = (origin: string) =>
      fetch(`${stack.url}/auth/connections/ac_1/exchange`, { method: "POST", headers: { origin, "content-type": "application/json" }, body: "{}" });

    const answers = { preflight: await preflight(allowedApp.url), exchange: await exchange(allowedApp.url) };
    const refused = { preflight: await preflight(otherApp.url), exchange: await exchange(otherApp.url) };

    for (const response of Object.values(answers)) {
      expect(response.headers.get("access-control-allow-origin")).toBe(allowedApp.url);
      expect(response.headers.get("vary")).toBe("Origin");
    }
    expect(refused.preflight.status).toBe(204);
    for (const response of Object.values(refused)) {
      expect(response.headers.get("access-control-allow-origin")).toBeNull();
      expect(response.headers.get("vary")).toBe("Origin");
    }
  });

  it("fixes the gateway's own answers to the one listed origin, whatever Origin a request sends, as API Gateway's gateway responses", async () => {
    const noToken = (origin: string) => fetch(`${stack.url}/auth/connections/ac_1`, { headers: { origin } });

    for (const response of [await noToken(allowedApp.url), await noToken(otherApp.url)]) {
      expect(response.status).toBe(401);
      expect(response.headers.get("access-control-allow-origin")).toBe(allowedApp.url);
    }
  });
});
