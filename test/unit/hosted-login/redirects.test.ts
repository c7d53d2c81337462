import type { APIGatewayProxyEvent } from "aws-lambda";
import { describe, expect, it } from "vitest";
import { loadConfig } from "#shared/config.ts";
import { hostedLoginUrl } from "#shared/domain/login-flows.ts";
import { checkRedirect, redirectOrigins, resolveRedirects } from "#shared/hosted-login/redirects.ts";
import { requestBaseUrl } from "#shared/http/base-url.ts";

const listed = redirectOrigins(["https://app.example.com", "http://127.0.0.1:3000"], "aws");

describe("redirect resolution", () => {
  it("follows an http(s) URL on a listed origin, with its own path and query", () => {
    expect(checkRedirect("https://app.example.com/done?step=2", listed)).toEqual({ url: "https://app.example.com/done?step=2" });
    expect(checkRedirect("http://127.0.0.1:3000/", listed)).toEqual({ url: "http://127.0.0.1:3000/" });
  });

  it.each([
    ["javascript:alert(document.domain)", "scheme"],
    ["data:text/html,<script>alert(1)</script>", "scheme"],
    ["ftp://app.example.com/file", "scheme"],
    ["/relative/path", "invalid"],
    ["//app.example.com/protocol-relative", "invalid"],
    ["not a url at all", "invalid"],
    ["https://evil.example.com/", "origin"],
    ["https://app.example.com.evil.example/", "origin"],
    ["https://app.example.com@evil.example/", "origin"],
    ["https://app.example.com:8443/", "origin"],
    ["http://app.example.com/", "origin"],
  ])("refuses %s (%s)", (value, reason) => {
    expect(checkRedirect(value, listed)).toEqual({ refused: reason });
  });

  it("allows nothing in AWS mode when REDIRECT_ORIGINS is unset", () => {
    expect(checkRedirect("https://app.example.com/", redirectOrigins(undefined, "aws"))).toEqual({ refused: "origin" });
  });

  it("allows any loopback origin on any port in local mode when REDIRECT_ORIGINS is unset, and nothing else", () => {
    const local = redirectOrigins(undefined, "local");
    for (const url of ["http://127.0.0.1:5173/ok", "https://localhost/ok", "http://[::1]:8080/ok"]) expect(checkRedirect(url, local)).toEqual({ url });
    expect(checkRedirect("http://192.168.1.10/ok", local)).toEqual({ refused: "origin" });
    expect(checkRedirect("javascript:alert(1)", local)).toEqual({ refused: "scheme" });
  });

  it("a listed REDIRECT_ORIGINS replaces local mode's loopback default", () => {
    expect(checkRedirect("http://127.0.0.1:5173/", redirectOrigins(["https://app.example.com"], "local"))).toEqual({ refused: "origin" });
  });

  it("resolves both redirects of a page request and names the first refusal", () => {
    expect(resolveRedirects({ success_url: "https://app.example.com/ok", error_url: "javascript:alert(1)" }, listed)).toEqual({
      success: "https://app.example.com/ok",
      error: null,
      refused: "scheme",
    });
    expect(resolveRedirects({}, listed)).toEqual({ success: null, error: null, refused: null });
  });
});

describe("hosted login settings", () => {
  it("reads REDIRECT_ORIGINS as origins, spelled as browsers send them", () => {
    const config = loadConfig({ REDIRECT_ORIGINS: " https://App.Example.com/ , http://127.0.0.1:3000" });
    expect(config.REDIRECT_ORIGINS).toEqual(["https://app.example.com", "http://127.0.0.1:3000"]);
    expect(loadConfig({ REDIRECT_ORIGINS: "" }).REDIRECT_ORIGINS).toEqual([]);
    expect(loadConfig({}).REDIRECT_ORIGINS).toBeUndefined();
  });

  it.each(["https://app.example.com/path", "javascript:alert(1)", "app.example.com", "https://app.example.com?x=1"])("refuses REDIRECT_ORIGINS %s", (value) => {
    expect(() => loadConfig({ REDIRECT_ORIGINS: value })).toThrow(/REDIRECT_ORIGINS.*origins such as https:\/\/app.example.com/);
  });

  it("takes FRAME_ANCESTORS sources and refuses what would break out of the directive", () => {
    expect(loadConfig({}).FRAME_ANCESTORS).toBe("'none'");
    expect(loadConfig({ FRAME_ANCESTORS: "'self' https://app.example.com https://*.example.org:8443" }).FRAME_ANCESTORS).toBe(
      "'self' https://app.example.com https://*.example.org:8443",
    );
    for (const value of ["'none'; script-src *", "https://a.example, https://b.example", "'none' https://app.example.com", "'unsafe-inline'"]) {
      expect(() => loadConfig({ FRAME_ANCESTORS: value })).toThrow(/FRAME_ANCESTORS/);
    }
  });

  it("takes PUBLIC_BASE_URL without its trailing slash and refuses a query", () => {
    expect(loadConfig({ PUBLIC_BASE_URL: "https://auth.example.com/v1/" }).PUBLIC_BASE_URL).toBe("https://auth.example.com/v1");
    expect(() => loadConfig({ PUBLIC_BASE_URL: "https://auth.example.com/?x=1" })).toThrow(/PUBLIC_BASE_URL/);
    expect(() => loadConfig({ PUBLIC_BASE_URL: "ftp://auth.example.com" })).toThrow(/PUBLIC_BASE_URL/);
  });
});

function apiEvent(headers: Record<string, string>, path: string, contextPath: string, domainName?: string) {
  return { headers, path, requestContext: { path: contextPath, domainName } } as unknown as APIGatewayProxyEvent;
}

describe("the base URL of a request", () => {
  it("behind API Gateway: https, the host, and the stage before the route's path", () => {
    const event = apiEvent(
      { Host: "abc123.execute-api.eu-west-1.amazonaws.com", "X-Forwarded-Proto": "https" },
      "/auth/connections/ac_1/login",
      "/v1/auth/connections/ac_1/login",
    );
    expect(requestBaseUrl(event)).toBe("https://abc123.execute-api.eu-west-1.amazonaws.com/v1");
  });

  it("on a custom domain with a base path mapping", () => {
    const event = apiEvent({ host: "auth.example.com", "x-forwarded-proto": "https" }, "/auth/connections/ac_1/login", "/auth-api/auth/connections/ac_1/login");
    expect(requestBaseUrl(event)).toBe("https://auth.example.com/auth-api");
  });

  it("from the local gateway: plain http and no prefix", () => {
    const event = apiEvent({ host: "127.0.0.1:8080", "x-forwarded-proto": "http" }, "/auth/connections/ac_1/login", "/auth/connections/ac_1/login");
    expect(requestBaseUrl(event)).toBe("http://127.0.0.1:8080");
  });

  it("https when no protocol is forwarded, and the context's domain name when no host is sent", () => {
    const event = apiEvent({}, "/auth/connections/ac_1/login", "/prod/auth/connections/ac_1/login", "abc123.execute-api.us-east-1.amazonaws.com");
    expect(requestBaseUrl(event)).toBe("https://abc123.execute-api.us-east-1.amazonaws.com/prod");
  });

  it("the hosted URL: the page under the base, the code as a query parameter", () => {
    expect(hostedLoginUrl("https://auth.example.com/v1", "ac_1", "code+/=")).toBe("https://auth.example.com/v1/login/ac_1?code=code%2B%2F%3D");
  });
});
