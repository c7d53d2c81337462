import { createHmac, timingSafeEqual } from "node:crypto";

/** HS256 JSON Web Tokens (RFC 7519), enough for tokens this service both issues and checks. */

const header = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

function signature(key: Uint8Array, signingInput: string): Buffer {
  return createHmac("sha256", key).update(signingInput).digest();
}

export function signJwt(key: Uint8Array, claims: Record<string, unknown>): string {
  const signingInput = `${header}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
  return `${signingInput}.${signature(key, signingInput).toString("base64url")}`;
}

const base64urlPart = /^[A-Za-z0-9_-]+$/;

/** Three base64url parts: the shape of a JWT, as against an opaque API key. */
export function looksLikeJwt(token: string): boolean {
  const parts = token.split(".");
  return parts.length === 3 && parts.every((part) => base64urlPart.test(part));
}

/**
 * The claims of a token signed with `key` under HS256, or undefined when the token is malformed,
 * names another algorithm (`none` included) or its signature does not match. Checks no claim:
 * what a claim must say is the caller's rule.
 */
export function verifiedJwtClaims(key: Uint8Array, token: string): Record<string, unknown> | undefined {
  if (!looksLikeJwt(token)) return undefined;
  const [encodedHeader, encodedClaims, encodedSignature] = token.split(".") as [string, string, string];
  const given = Buffer.from(encodedSignature, "base64url");
  const expected = signature(key, `${encodedHeader}.${encodedClaims}`);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  const decodedHeader = parseObject(encodedHeader);
  if (decodedHeader?.alg !== "HS256") return undefined;
  return parseObject(encodedClaims);
}

function parseObject(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
