import { randomBytes } from "node:crypto";

export type IdPrefix = "ac" | "pr" | "bp" | "bs" | "cr" | "ev";

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";

/** Opaque id with a type prefix: 20 base32 characters of randomness (100 bits). */
export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(20);
  let body = "";
  for (const byte of bytes) body += alphabet[byte & 31];
  return `${prefix}_${body}`;
}
