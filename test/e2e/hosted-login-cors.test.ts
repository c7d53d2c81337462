import type Kernel from "@onkernel/sdk";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { exposedHeaders, gatewayCorsHeaders, preflightMaxAgeSeconds } from "#shared/http/cors.ts";
import { openEmbeddingApp, startEmbeddingApp } from "../sites/embedded-login/page.ts";
import { startLoginSite, type LoginSite } from "../sites/login-site.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { officialClient, startTestStack } from "../support/stack.ts";

/** What the embedded login UI's script (test/sites/embedded-login/login-ui.js) puts on its page. */
interface EmbeddedLogin {
  exchange(baseUrl: string, id: string, code: string): Promise<string>;
  getConnection(baseUrl: string, id: string, token: string): Promise<Record<string, unknown>>;
  submit(baseUrl: string, id: string, token: string, body: unknown): Promise<unknown>;
  nextState(baseUrl: string, id: string, token: string, until: "input" | "end"): Promise<{ state: FlowState; requestId: string | null }>;
  attempt(url: string, init: Record<string, unknown>): Promise<{ status?: number; failed?: string }>;
}
interface FlowState {
  flow_status: string;
  flow_step: string;
  fields?: Array<{ id: string; ref: string; type: string }>;
}
declare const window: { embeddedLogin: EmbeddedLogin };

let site: LoginSite;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
let app: Awaited<ReturnType<typeof startEmbeddingApp>>;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let browser: Browser | undefined;

beforeAll(async () => {
  site = await startLoginSite();
  stack = await startTestStack({ timeScale: 0.03 });
  client = officialClient(stack);
  app = await startEmbeddingApp();
  chromium = await loginChromiumForTests();
});

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  await chromium?.dispose();
  await app?.stop();
  await stack?.stop();
  await site?.stop();
});

/** The caller's app open in a browser with web security on; its origin is not the service's. */
async function embeddingPage(): Promise<Page> {
  browser = await chromium.launch();
  return openEmbeddingApp(browser, app.url);
}

const corsHeaderNames = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith("access-control-"));

describe("a login UI embedded in another origin's page", () => {
  it("exchanges the code, reads the connection, submits and follows the events until the login succeeds", async () => {
    const created = await client.auth.connections.create({ domain: "127.0.0.1", profile_name: "embedded", login_url: `${site.url}/plain/login`, health_checks: false });
    const { handoff_code: code } = await client.auth.connections.login(created.id);
    const page = await embeddingPage();
    const call = { baseUrl: stack.url, id: created.id, code: code ?? "" };

    const token = await page.evaluate(({ baseUrl, id, code }) => window.embeddedLogin.exchange(baseUrl, id, code), call);
    const read = await page.evaluate(({ baseUrl, id, token }) => window.embeddedLogin.getConnection(baseUrl, id, token), { ...call, token });
    const asked = await page.evaluate(({ baseUrl, id, token }) => window.embeddedLogin.nextState(baseUrl, id, token, "input"), { ...call, token });
    const typed: Record<string, string> = { identifier: site.user.email, password: site.user.password };
    const fields = Object.fromEntries((asked.state.fields ?? []).map((field) => [field.ref, typed[field.type] ?? ""]));
    const accepted = await page.evaluate(({ baseUrl, id, token, fields }) => window.embeddedLogin.submit(baseUrl, id, token, { fields }), { ...call, token, fields });
    const ended = await page.evaluate(({ baseUrl, id, token }) => window.embeddedLogin.nextState(baseUrl, id, token, "end"), { ...call, token });

    expect(read).toMatchObject({ id: created.id, domain: "127.0.0.1" });
    expect(asked.state).toMatchObject({ flow_status: "IN_PROGRESS", flow_step: "AWAITING_INPUT" });
    expect(Object.keys(fields).sort()).toEqual(asked.state.fields?.map((field) => field.ref).sort());
    expect(accepted).toEqual({ accepted: true });
    expect(ended.state).toMatchObject({ flow_status: "SUCCESS" });
    // The stream's headers are readable by the page: the streamed answer carries the CORS headers too.
    expect(ended.requestId).toEqual(expect.any(String));
    expect(await client.auth.connections.retrieve(created.id)).toMatchObject({ status: "AUTHENTICATED" });
  });

  it("cannot call an API-key route: the browser refuses the answer for lack of CORS", async () => {
    const page = await embeddingPage();

    const profiles = await page.evaluate(
      ([url, key]) => window.embeddedLogin.attempt(url, { headers: { authorization: `Bearer ${key}` } }),
      [`${stack.url}/profiles`, stack.apiKey] as const,
    );

    expect(profiles.failed).toMatch(/TypeError/);
    const direct = await fetch(`${stack.url}/profiles`, { headers: { authorization: `Bearer ${stack.apiKey}`, origin: app.url } });
    expect(direct.status).toBe(200);
  });
});

describe("the gateway's CORS answers (ALLOWED_ORIGINS unset: any origin)", () => {
  const origin = "https://app.example";

  it.each([
    ["/auth/connections/ac_1/exchange", "POST"],
    ["/auth/connections/ac_1", "GET"],
    ["/auth/connections/ac_1/submit", "POST"],
    ["/auth/connections/ac_1/events", "GET"],
  ])("answers the preflight of %s: %s, with the token, JSON and event-stream headers allowed", async (path, method) => {
    const response = await fetch(`${stack.url}${path}`, {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": method, "access-control-request-headers": "authorization, content-type" },
    });

    expect(response.status).toBe(204);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": method,
      "access-control-allow-headers": "authorization, content-type, accept",
      "access-control-max-age": String(preflightMaxAgeSeconds),
      vary: "Origin",
    });
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  });

  it.each(["/profiles", "/auth/connections", "/auth/connections/ac_1/timeline"])(
    "answers OPTIONS %s with the gateway's own 404, which no browser takes as a preflight's answer, its fixed CORS headers as API Gateway's",
    async (path) => {
      const response = await fetch(`${stack.url}${path}`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "GET" } });

      expect(response.status).toBe(404);
      expect(corsHeaderNames(response).sort()).toEqual(Object.keys(gatewayCorsHeaders("*")).sort());
      expect(response.headers.get("access-control-allow-methods")).toBeNull();
    },
  );

  it("answers the API-key routes without CORS headers, even to a request with an Origin; the gateway's own refusal has its fixed ones", async () => {
    const headers = { origin, authorization: `Bearer ${stack.apiKey}` };

    const list = await fetch(`${stack.url}/profiles`, { headers });
    const create = await fetch(`${stack.url}/auth/connections`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ domain: "cors.example.com", profile_name: "cors-api-key" }),
    });
    const unauthenticated = await fetch(`${stack.url}/profiles`, { headers: { origin } });

    expect([list.status, create.status, unauthenticated.status]).toEqual([200, 201, 401]);
    for (const response of [list, create]) expect(corsHeaderNames(response)).toEqual([]);
    expect(Object.fromEntries(unauthenticated.headers)).toMatchObject(gatewayCorsHeaders("*"));
  });

  it("answers GET of a connection with CORS headers to its handoff token, and without to an API key, Origin sent either way", async () => {
    const created = await client.auth.connections.create({ domain: "cors.example.com", profile_name: `cors-get-${Date.now()}`, health_checks: false });
    const { handoff_code } = await client.auth.connections.login(created.id);
    const exchanged = await fetch(`${stack.url}/auth/connections/${created.id}/exchange`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: handoff_code }),
    });
    const { jwt } = (await exchanged.json()) as { jwt: string };

    const withToken = await fetch(`${stack.url}/auth/connections/${created.id}`, { headers: { origin, authorization: `Bearer ${jwt}` } });
    const withKey = await fetch(`${stack.url}/auth/connections/${created.id}`, { headers: { origin, authorization: `Bearer ${stack.apiKey}` } });

    expect([withToken.status, withKey.status]).toEqual([200, 200]);
    expect(withToken.headers.get("access-control-allow-origin")).toBe("*");
    expect(withKey.headers.get("access-control-allow-origin")).toBeNull();
    expect(corsHeaderNames(withKey)).toEqual([]);
    await client.auth.connections.delete(created.id);
  });

  it("puts the CORS headers on the error answers of the token routes, the handler's and the gateway's own", async () => {
    const json = { origin, "content-type": "application/json" };

    const usedCode = await fetch(`${stack.url}/auth/connections/ac_1/exchange`, { method: "POST", headers: json, body: JSON.stringify({ code: "not-a-code" }) });
    const badBody = await fetch(`${stack.url}/auth/connections/ac_1/exchange`, { method: "POST", headers: json, body: "{" });
    const noToken = await fetch(`${stack.url}/auth/connections/ac_1`, { headers: { origin } });
    const tooLarge = await fetch(`${stack.url}/auth/connections/ac_1/exchange`, { method: "POST", headers: json, body: "x".repeat(2 * 1024 * 1024) });
    const noRoute = await fetch(`${stack.url}/auth/connections/ac_1/exchange`, { method: "PUT", headers: json, body: "{}" });

    const answers = [usedCode, badBody, noToken, tooLarge, noRoute];
    expect(answers.map((response) => response.status)).toEqual([401, 400, 401, 413, 404]);
    for (const response of answers) {
      expect(Object.fromEntries(response.headers), response.url).toMatchObject({
        "access-control-allow-origin": "*",
        "access-control-expose-headers": exposedHeaders.join(", "),
      });
    }
    // The handler's answers echo by the request's Origin; the gateway's own are fixed for every Origin.
    for (const response of [usedCode, badBody]) expect(response.headers.get("vary")).toBe("Origin");
  });
});
