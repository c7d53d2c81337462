import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** A sealed secret that does not open: wrong key, wrong context, or altered. Never carries the plaintext. */
export class SecretOpenError extends Error {
  constructor(why: string, options?: ErrorOptions) {
    super(`sealed secret could not be opened: ${why}`, options);
    this.name = "SecretOpenError";
  }
}

export const keyBytes = 32;
const ivBytes = 12;
const tagBytes = 16;

/**
 * The context as GCM additional data: JSON with the keys sorted by code unit, so the same context
 * always gives the same bytes whatever order its keys were written in.
 */
export function canonicalContext(context: Record<string, string>): Buffer {
  const sorted = Object.keys(context)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((key) => [key, context[key]]);
  return Buffer.from(JSON.stringify(Object.fromEntries(sorted)), "utf8");
}

/** AES-256-GCM under `key`, with a fresh random IV; the ciphertext carries its tag at the end. */
export function gcmSeal(key: Uint8Array, plaintext: string, context: Record<string, string>): { iv: Buffer; ciphertext: Buffer } {
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: tagBytes });
  cipher.setAAD(canonicalContext(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return { iv, ciphertext };
}

export function gcmOpen(key: Uint8Array, iv: Buffer, ciphertext: Buffer, context: Record<string, string>): string {
  if (iv.length !== ivBytes || ciphertext.length < tagBytes) throw new SecretOpenError("malformed envelope");
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: tagBytes });
  decipher.setAAD(canonicalContext(context));
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - tagBytes));
  try {
    return Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - tagBytes)), decipher.final()]).toString("utf8");
  } catch (error) {
    throw new SecretOpenError("wrong key or context, or the envelope was altered", { cause: error });
  }
}

const base64url = /^[A-Za-z0-9_-]*$/;

/**
 * Splits `v1.<kind>.<part>...` into its decoded parts, or fails when the envelope is not one of
 * `kind` with `parts` parts.
 */
export function envelopeParts(sealed: string, kind: string, parts: number): Buffer[] {
  const fields = sealed.split(".");
  if (fields[0] !== "v1" || fields[1] !== kind || fields.length !== parts + 2) {
    throw new SecretOpenError(`not a v1.${kind} envelope`);
  }
  const encoded = fields.slice(2);
  if (!encoded.every((part) => base64url.test(part))) throw new SecretOpenError("malformed envelope");
  return encoded.map((part) => Buffer.from(part, "base64url"));
}

export function envelope(kind: string, parts: Uint8Array[]): string {
  return ["v1", kind, ...parts.map((part) => Buffer.from(part).toString("base64url"))].join(".");
}
