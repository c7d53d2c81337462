import { describe, expect, it } from "vitest";
import { BadRequestError } from "#shared/domain/errors.ts";
import { normalizeDomain } from "#shared/domain/targets.ts";

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
});
