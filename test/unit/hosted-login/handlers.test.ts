import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { ResolvedRedirects } from "#shared/hosted-login/redirects.ts";
import { hostedLoginStrings } from "#shared/hosted-login/strings.ts";
import { anonymousHttpHandler } from "#shared/http/handler.ts";

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** Runs a handler in a process of its own, as Lambda would, with exactly these settings. */
async function invoke(handler: string, event: Record<string, unknown>, settings: Record<string, string> = {}): Promise<Answer> {
  const environment = { PATH: process.env.PATH, DEPLOYMENT_MODE: "aws", LOG_LEVEL: "error", ...settings };
  const { stdout } = await promisify(execFile)(process.execPath, ["test/support/invoke-handler.ts", resolve(handler), JSON.stringify(event)], { env: environment });
  return (JSON.parse(stdout) as { answer: Answer }).answer;
}

function pageEvent(options: { id?: string; query?: Record<string, string>; headers?: Record<string, string> } = {}) {
  const id = options.id ?? "ac_0123456789abcdef";
  return {
    resource: "/login/{id}",
    path: `/login/${id}`,
    httpMethod: "GET",
    headers: { host: "auth.example.com", ...options.headers },
    pathParameters: { id },
    queryStringParameters: { code: "handoff-code-kept-for-the-script", ...options.query },
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: "req-page", path: `/v1/login/${id}`, httpMethod: "GET", authorizer: null },
  };
}

const openPage = (options?: Parameters<typeof pageEvent>[0], settings?: Record<string, string>) => invoke("functions/http/hosted/page.ts", pageEvent(options), settings);

function pageData(html: string): { strings: unknown; redirect: ResolvedRedirects } {
  const block = /<script type="application\/json" id="page-data">([\s\S]*?)<\/script>/.exec(html);
  if (!block?.[1]) throw new Error("the page has no page-data block");
  return JSON.parse(block[1]);
}

const htmlLang = (html: string) => /<html\b[^>]*\blang="([^"]*)"/.exec(html)?.[1];

/** The headers every answer of the page's route carries, errors included. */
const pageSecurityHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

describe("the hosted login page", () => {
  it("answers the document with strict security headers", async () => {
    const answer = await openPage();

    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toMatchObject({ "content-type": "text/html; charset=utf-8", ...pageSecurityHeaders });
    expect(answer.headers["content-security-policy"]).not.toContain("unsafe-inline");
    expect(answer.body).toContain('<script type="module" src="../login-assets/login.js">');
  });

  it("lets FRAME_ANCESTORS name who may embed the page", async () => {
    const answer = await openPage({}, { FRAME_ANCESTORS: "'self' https://app.example.com" });

    expect(answer.headers["content-security-policy"]).toMatch(/; frame-ancestors 'self' https:\/\/app\.example\.com$/);
  });

  it("does not put the code, or anything else of the URL, into the page", async () => {
    const answer = await openPage({ query: { code: "handoff-code-kept-for-the-script", note: "</script><script>alert(1)</script>" } });

    expect(answer.body).not.toContain("handoff-code-kept-for-the-script");
    expect(answer.body).not.toContain("alert(1)");
  });

  it("speaks the browser's best language the page has, English otherwise", async () => {
    const german = await openPage({ headers: { "Accept-Language": "fr;q=0.5, de-AT, en;q=0.8" } });
    const unknown = await openPage({ headers: { "accept-language": "ja-JP, zh;q=0.9" } });

    expect(htmlLang(german.body)).toBe("de");
    expect(pageData(german.body).strings).toEqual(hostedLoginStrings.de);
    expect(htmlLang(unknown.body)).toBe("en");
    expect(pageData(unknown.body).strings).toEqual(hostedLoginStrings.en);
  });

  it("carries only redirects whose origin REDIRECT_ORIGINS lists, and why another is refused", async () => {
    const settings = { REDIRECT_ORIGINS: "https://app.example.com" };

    const allowed = await openPage({ query: { success_url: "https://app.example.com/done?x=1", error_url: "https://app.example.com/oops" } }, settings);
    const elsewhere = await openPage({ query: { success_url: "https://evil.example/</script>", error_url: "https://app.example.com/oops" } }, settings);
    const script = await openPage({ query: { success_url: "javascript:alert(document.cookie)" } }, settings);

    expect(pageData(allowed.body).redirect).toEqual({
      success: "https://app.example.com/done?x=1",
      successRefused: null,
      error: "https://app.example.com/oops",
      errorRefused: null,
    });
    expect(pageData(elsewhere.body).redirect).toEqual({ success: null, successRefused: "origin", error: "https://app.example.com/oops", errorRefused: null });
    expect(elsewhere.body).not.toContain("evil.example");
    expect(pageData(script.body).redirect).toEqual({ success: null, successRefused: "scheme", error: null, errorRefused: null });
    expect(script.body).not.toContain("javascript:");
  });

  it("follows no redirect in AWS mode without REDIRECT_ORIGINS", async () => {
    const answer = await openPage({ query: { success_url: "https://app.example.com/done" } });

    expect(pageData(answer.body).redirect).toEqual({ success: null, successRefused: "origin", error: null, errorRefused: null });
  });

  it("serves the page with an overlong redirect refused as invalid, not an error", async () => {
    const answer = await openPage({ query: { success_url: `https://app.example.com/${"a".repeat(2100)}` } }, { REDIRECT_ORIGINS: "https://app.example.com" });

    expect(answer.statusCode).toBe(200);
    expect(pageData(answer.body).redirect).toEqual({ success: null, successRefused: "invalid", error: null, errorRefused: null });
  });

  it("answers 400 naming the problem for a bad connection id, with the page's security headers", async () => {
    const badId = await openPage({ id: "x".repeat(65) });

    expect(badId.statusCode).toBe(400);
    expect(badId.headers).toMatchObject(pageSecurityHeaders);
    expect(JSON.parse(badId.body)).toMatchObject({ code: "bad_request", message: expect.stringContaining("id") });
  });

  it("keeps the headers every answer has on a 5xx too", async () => {
    const everyAnswer = { "referrer-policy": "no-referrer", "cache-control": "no-store" };
    const failing = anonymousHttpHandler(
      () => ({}),
      {},
      async () => {
        throw new Error("the page's document could not be read");
      },
      { everyAnswer: () => everyAnswer },
    );

    const answer = await failing(pageEvent() as unknown as Parameters<typeof failing>[0]);

    expect(answer.statusCode).toBe(500);
    expect(answer.headers).toMatchObject(everyAnswer);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "internal_error" });
  });
});

function assetEvent(file: string) {
  return {
    resource: "/login-assets/{file}",
    path: `/login-assets/${file}`,
    httpMethod: "GET",
    headers: { host: "auth.example.com" },
    pathParameters: { file },
    queryStringParameters: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { requestId: "req-asset", path: `/v1/login-assets/${file}`, httpMethod: "GET", authorizer: null },
  };
}

describe("the hosted login page's assets", () => {
  it.each([
    ["login.js", "text/javascript; charset=utf-8"],
    ["login.css", "text/css; charset=utf-8"],
  ])("serves %s as %s, not sniffed", async (file, contentType) => {
    const answer = await invoke("functions/http/hosted/asset.ts", assetEvent(file));

    expect(answer.statusCode).toBe(200);
    expect(answer.headers).toMatchObject({ "content-type": contentType, "x-content-type-options": "nosniff" });
    expect(answer.headers["cache-control"]).not.toContain("no-store");
    expect(answer.body.length).toBeGreaterThan(0);
  });

  it.each(["page.html", "..%2Fpage.html", "constructor", "login.js.map"])("answers 404 with the error body for %s", async (file) => {
    const answer = await invoke("functions/http/hosted/asset.ts", assetEvent(file));

    expect(answer.statusCode).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ code: "not_found", message: expect.stringContaining("no hosted login asset") });
  });
});
