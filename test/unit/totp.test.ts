import { describe, expect, it } from "vitest";
import {
  base32Decode,
  base32Encode,
  generateTotpSecret,
  InvalidTotpSecretError,
  totpCode,
  totpMatches,
  totpWindowEndsAt,
  type TotpAlgorithm,
} from "#shared/secrets/totp.ts";

/** RFC 6238 Appendix B: the seeds repeat "1234567890" to the hash's block-friendly key length. */
const rfcSeeds: Record<TotpAlgorithm, string> = {
  sha1: base32Encode(Buffer.from("12345678901234567890")),
  sha256: base32Encode(Buffer.from("12345678901234567890123456789012")),
  sha512: base32Encode(Buffer.from("1234567890123456789012345678901234567890123456789012345678901234")),
};

const rfcVectors: Array<[seconds: number, algorithm: TotpAlgorithm, code: string]> = [
  [59, "sha1", "94287082"],
  [59, "sha256", "46119246"],
  [59, "sha512", "90693936"],
  [1111111109, "sha1", "07081804"],
  [1111111109, "sha256", "68084774"],
  [1111111109, "sha512", "25091201"],
  [1111111111, "sha1", "14050471"],
  [1111111111, "sha256", "67062674"],
  [1111111111, "sha512", "99943326"],
  [1234567890, "sha1", "89005924"],
  [1234567890, "sha256", "91819424"],
  [1234567890, "sha512", "93441116"],
  [2000000000, "sha1", "69279037"],
  [2000000000, "sha256", "90698825"],
  [2000000000, "sha512", "38618901"],
  [20000000000, "sha1", "65353130"],
  [20000000000, "sha256", "77737706"],
  [20000000000, "sha512", "47863826"],
];

describe("TOTP", () => {
  it.each(rfcVectors)("RFC 6238 at %i s with %s is %s", (seconds, algorithm, code) => {
    expect(totpCode(rfcSeeds[algorithm], new Date(seconds * 1000), { algorithm, digits: 8 })).toBe(code);
  });

  it("defaults to SHA-1, 30 s steps and 6 digits (the last six of the 8-digit code)", () => {
    expect(totpCode(rfcSeeds.sha1, new Date(59_000))).toBe("287082");
    expect(totpCode(rfcSeeds.sha1, new Date(1111111109_000))).toBe("081804");
  });

  it("keeps a code for its whole 30 s window and changes it at the boundary", () => {
    const windowStart = new Date(1111111110_000);
    const code = totpCode(rfcSeeds.sha1, windowStart);

    expect(totpCode(rfcSeeds.sha1, new Date(windowStart.getTime() + 29_999))).toBe(code);
    expect(totpCode(rfcSeeds.sha1, new Date(windowStart.getTime() + 30_000))).not.toBe(code);
    expect(totpWindowEndsAt(new Date(windowStart.getTime() + 12_345))).toEqual(new Date(1111111140_000));
    expect(totpWindowEndsAt(windowStart)).toEqual(new Date(1111111140_000));
  });

  it("accepts the current and the previous window's code, nothing older or newer", () => {
    const at = new Date(1111111111_000);
    const secret = rfcSeeds.sha1;

    expect(totpMatches(secret, totpCode(secret, at), at)).toBe(true);
    expect(totpMatches(secret, totpCode(secret, new Date(at.getTime() - 30_000)), at)).toBe(true);
    expect(totpMatches(secret, totpCode(secret, new Date(at.getTime() - 60_000)), at)).toBe(false);
    expect(totpMatches(secret, totpCode(secret, new Date(at.getTime() + 30_000)), at)).toBe(false);
    // Not a code at all, the wrong length or one non-ASCII character: an answer, never an error.
    expect(totpMatches(secret, "12345", at)).toBe(false);
    expect(totpMatches(secret, "12345é", at)).toBe(false);
    expect(totpMatches(secret, "abcdef", at)).toBe(false);
    expect(totpMatches(secret, "12345", at)).toBe(false);
    expect(totpMatches(secret, "", new Date(10_000))).toBe(false);
  });

  it("reads a secret in any case, grouped by spaces, with or without padding", () => {
    const at = new Date(1234567890_000);
    const expected = totpCode(rfcSeeds.sha1, at);
    const grouped = rfcSeeds.sha1.toLowerCase().replace(/(.{4})/g, "$1 ");

    expect(totpCode(grouped, at)).toBe(expected);
  });

  it("generates distinct 160-bit secrets an authenticator can use", () => {
    const first = generateTotpSecret();
    const second = generateTotpSecret();

    expect(first).toMatch(/^[A-Z2-7]{32}$/);
    expect(base32Decode(first)).toHaveLength(20);
    expect(second).not.toBe(first);
    expect(totpCode(first)).toMatch(/^\d{6}$/);
  });
});

describe("base32", () => {
  it.each([
    ["", ""],
    ["f", "MY======"],
    ["fo", "MZXQ===="],
    ["foo", "MZXW6==="],
    ["foob", "MZXW6YQ="],
    ["fooba", "MZXW6YTB"],
    ["foobar", "MZXW6YTBOI======"],
  ])("RFC 4648 %j <-> %j", (plain, encoded) => {
    expect(base32Encode(Buffer.from(plain))).toBe(encoded);
    expect(base32Decode(encoded).toString()).toBe(plain);
    expect(base32Decode(encoded.replace(/=/g, "").toLowerCase()).toString()).toBe(plain);
  });

  it("round-trips every byte value", () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, index) => index));

    expect(base32Decode(base32Encode(bytes))).toEqual(bytes);
  });

  it.each([
    ["a character outside the alphabet", "JBSWY3DP1", /only the letters A-Z and the digits 2-7/],
    ["an 8 or 9", "JBSWY3D8", /only the letters A-Z and the digits 2-7/],
    ["a length that cannot end on a whole byte", "JBSWY3DPA", /9 characters cannot end on a whole byte/],
  ])("rejects %s without echoing the secret", (_case, secret, message) => {
    expect(() => totpCode(secret)).toThrow(InvalidTotpSecretError);
    expect(() => totpCode(secret)).toThrow(message);
    expect(() => totpCode(secret)).not.toThrow(secret);
  });

  it("rejects an empty secret for a code", () => {
    expect(() => totpCode(" = ")).toThrow("invalid TOTP secret: the secret is empty");
  });
});
