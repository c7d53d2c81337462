import { describe, expect, it } from "vitest";
import { loadConfig } from "#shared/config.ts";

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
