import { describe, expect, it } from "vitest";
import { BadRequestError } from "#shared/domain/errors.ts";
import type { ConnectionStore } from "#shared/domain/connection.ts";
import type { CredentialStore } from "#shared/domain/credential.ts";
import { connectionLifecycleCore, connectionsCore } from "#shared/domain/connections.ts";
import type { ProfileStore } from "#shared/domain/profile.ts";
import { checkLoginUrl, normalizeDomain } from "#shared/domain/target-fields.ts";
import type { WorkflowEngine } from "#shared/domain/workflow.ts";

const aws = { allowPrivateTargets: false };
const local = { allowPrivateTargets: true };

describe("normalizeDomain", () => {
  it.each([
    ["Netflix.COM", "netflix.com"],
    ["  sub.example.co.uk ", "sub.example.co.uk"],
    ["xn--bcher-kva.example", "xn--bcher-kva.example"],
  ])("accepts %j as %j", (raw, expected) => {
    expect(normalizeDomain(raw, "domain", aws)).toBe(expected);
  });

  it.each(["", "https://x.com", "x.com/login", "x.com:443", "user@x.com", "nodot", "a..b", "-a.com", "a-.com", "ex ample.com", `${"a".repeat(64)}.com`])(
    "refuses %j naming the field",
    (raw) => {
      expect(() => normalizeDomain(raw, "allowed_domains[2]", aws)).toThrow(BadRequestError);
      expect(() => normalizeDomain(raw, "allowed_domains[2]", aws)).toThrow(/^allowed_domains\[2\]: /);
    },
  );

  it.each(["localhost", "127.0.0.1", "10.0.0.1", "::1"])("refuses %j in AWS mode and accepts it in local mode", (raw) => {
    expect(() => normalizeDomain(raw, "domain", aws)).toThrow(/IP address or localhost/);
    expect(normalizeDomain(raw, "domain", local)).toBe(raw);
  });

  it.each(["co.uk", "CO.UK", "com", "github.io", "s3.amazonaws.com", "foo.ck"])("refuses the public suffix %j in either mode, naming the field", (raw) => {
    for (const policy of [aws, local]) {
      expect(() => normalizeDomain(raw, "allowed_domains[0]", policy)).toThrow(BadRequestError);
      expect(() => normalizeDomain(raw, "allowed_domains[0]", policy)).toThrow(/^allowed_domains\[0\]: '.+' is a public suffix/);
    }
  });

  it.each(["example.co.uk", "alice.github.io", "www.ck", "bucket.s3.amazonaws.com", "shop.example"])("accepts %j, one site under a public suffix", (raw) => {
    expect(normalizeDomain(raw, "domain", aws)).toBe(raw);
  });
});

describe("checkLoginUrl", () => {
  it.each(["https://x.com/login", "http://x.com/login", "https://x.com:443/login", "http://x.com:80/", "http://x.com:443/"])("accepts %j in AWS mode", (url) => {
    expect(() => checkLoginUrl(url, aws)).not.toThrow();
  });

  it.each(["https://x.com:8443/login", "http://x.com:8080/", "https://x.com:22/"])("refuses %j in AWS mode and accepts it in local mode", (url) => {
    expect(() => checkLoginUrl(url, aws)).toThrow(BadRequestError);
    expect(() => checkLoginUrl(url, aws)).toThrow(/^login_url: port \d+ is not 80 or 443/);
    expect(() => checkLoginUrl(url, local)).not.toThrow();
  });
});

/** A port whose every method fails the test: a refused request must not reach it. */
function untouchable<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_target, method) => () => {
      throw new Error(`${what}.${String(method)} was called for a request that should have been refused`);
    },
  });
}

describe("connections in AWS mode", () => {
  const deps = {
    connections: untouchable<ConnectionStore>("connections"),
    profiles: untouchable<ProfileStore>("profiles"),
    credentials: untouchable<CredentialStore>("credentials"),
    workflow: untouchable<WorkflowEngine>("workflow"),
    timing: { timeScale: 1, maxIterations: 1, maxAgeDays: 1 },
    policy: aws,
  };

  it("create refuses a login_url on another port with a 400 naming login_url, before any write", async () => {
    const created = connectionLifecycleCore(deps).create("org", { domain: "x.com", profile_name: "p", login_url: "https://x.com:8443/login" });
    await expect(created).rejects.toBeInstanceOf(BadRequestError);
    await expect(created).rejects.toThrow(/^login_url: port 8443 is not 80 or 443/);
  });

  it("update refuses a login_url on another port with a 400 naming login_url, before any write", async () => {
    const updated = connectionsCore(deps).update("org", "ac_1", { login_url: "http://x.com:8080/" });
    await expect(updated).rejects.toBeInstanceOf(BadRequestError);
    await expect(updated).rejects.toThrow(/^login_url: port 8080 is not 80 or 443/);
  });

  it("create refuses a public suffix as the domain before any write", async () => {
    const created = connectionLifecycleCore(deps).create("org", { domain: "github.io", profile_name: "p" });
    await expect(created).rejects.toThrow(/^domain: 'github\.io' is a public suffix/);
  });
});
