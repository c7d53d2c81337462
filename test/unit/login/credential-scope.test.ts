import { describe, expect, it } from "vitest";
import { credentialFitsHost, credentialHostRefusal, isSsoProviderDomain, sameSite } from "#shared/policy/scope.ts";

describe("where a stored credential may be typed", () => {
  it.each([
    ["bank.example", "bank.example"],
    ["bank.example", "login.bank.example"],
    ["example.co.uk", "secure.login.example.co.uk"],
    ["alice.github.io", "alice.github.io"],
    ["127.0.0.1", "127.0.0.1"],
    ["localhost", "localhost"],
    ["example.localhost", "login.example.localhost"],
    ["BANK.example", "Login.Bank.Example"],
  ])("a credential for %s is typed on %s", (domain, host) => {
    expect(credentialFitsHost(domain, host)).toBe(true);
  });

  it.each([
    ["bank.example", "evil.example"],
    ["bank.example", "bank.example.evil.example"],
    ["bank.example", "notbank.example"],
    ["login.bank.example", "bank.example"],
    // Under a shared suffix (the list's private section), a sibling is another site.
    ["github.io", "alice.github.io"],
    ["co.uk", "bank.co.uk"],
    ["localhost", "login.localhost"],
    ["127.0.0.1", "localhost"],
    ["localhost", "127.0.0.1"],
    ["0.1", "127.0.0.1"],
  ])("a credential for %s is not typed on %s", (domain, host) => {
    expect(credentialFitsHost(domain, host)).toBe(false);
  });

  it("names both domains when it refuses", () => {
    expect(credentialHostRefusal("bank.example", new URL("https://login.bank.example/signin"))).toBeNull();
    expect(credentialHostRefusal("bank.example", new URL("https://evil.example/collect"))).toBe(
      "the stored credential saved for bank.example is not typed on or sent to evil.example, which is outside that domain",
    );
  });
});

describe("which credentials a connection may link", () => {
  it("takes one registrable domain as one site", () => {
    expect(sameSite("www.example.com", "login.example.com")).toBe(true);
    expect(sameSite("example.com", "evil.com")).toBe(false);
    expect(sameSite("alice.github.io", "bob.github.io")).toBe(false);
    expect(sameSite("127.0.0.1", "127.0.0.1")).toBe(true);
    expect(sameSite("localhost", "127.0.0.1")).toBe(false);
  });

  it("knows the identity providers' domains", () => {
    expect(isSsoProviderDomain("accounts.google.com")).toBe(true);
    expect(isSsoProviderDomain("acme.okta.com")).toBe(true);
    expect(isSsoProviderDomain("bank.example")).toBe(false);
  });
});
