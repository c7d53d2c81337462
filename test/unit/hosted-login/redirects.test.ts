import { describe, expect, it } from "vitest";
import { checkRedirect, maxRedirectLength, redirectOrigins, resolveRedirects } from "#shared/hosted-login/redirects.ts";

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

  it("refuses a URL longer than any link should be as invalid, and takes one just within", () => {
    const base = "https://app.example.com/";
    const within = `${base}${"a".repeat(maxRedirectLength - base.length)}`;

    expect(checkRedirect(within, listed)).toEqual({ url: within });
    expect(checkRedirect(`${within}a`, listed)).toEqual({ refused: "invalid" });
  });

  it("resolves each redirect of a page request on its own: a refused error_url leaves success_url followed and unflagged", () => {
    expect(resolveRedirects({ success_url: "https://app.example.com/ok", error_url: "javascript:alert(1)" }, listed)).toEqual({
      success: "https://app.example.com/ok",
      successRefused: null,
      error: null,
      errorRefused: "scheme",
    });
    expect(resolveRedirects({ success_url: "https://evil.example/", error_url: "https://app.example.com/oops" }, listed)).toEqual({
      success: null,
      successRefused: "origin",
      error: "https://app.example.com/oops",
      errorRefused: null,
    });
    expect(resolveRedirects({}, listed)).toEqual({ success: null, successRefused: null, error: null, errorRefused: null });
  });
});
