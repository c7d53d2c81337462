import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** RFC 6238 time-based one-time passwords over RFC 4648 base32 secrets, as authenticator apps compute them. */

export type TotpAlgorithm = "sha1" | "sha256" | "sha512";

export interface TotpOptions {
  algorithm?: TotpAlgorithm;
  digits?: 6 | 8;
  stepSeconds?: number;
}

/** Thrown for a secret that is not base32; the message never repeats the secret. */
export class InvalidTotpSecretError extends Error {
  constructor(reason: string) {
    super(`invalid TOTP secret: ${reason}`);
    this.name = "InvalidTotpSecretError";
  }
}

const base32Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const defaultStepSeconds = 30;
/** Characters left over after the last full 8-character group that can hold whole bytes (1, 2, 3 or 4 bytes). */
const validRemainders = new Set([0, 2, 4, 5, 7]);

/** Decodes base32 case-insensitively, ignoring spaces and `=` padding, as secrets are typed or shown in groups. */
export function base32Decode(text: string): Buffer {
  const symbols = text.replace(/[\s=]/g, "").toUpperCase();
  if (!/^[A-Z2-7]*$/.test(symbols)) throw new InvalidTotpSecretError("only the letters A-Z and the digits 2-7 are base32");
  if (!validRemainders.has(symbols.length % 8)) {
    throw new InvalidTotpSecretError(`a base32 text of ${symbols.length} characters cannot end on a whole byte`);
  }
  const bytes: number[] = [];
  let buffer = 0;
  let bufferedBits = 0;
  for (const symbol of symbols) {
    buffer = ((buffer << 5) | base32Alphabet.indexOf(symbol)) & 0xffff;
    bufferedBits += 5;
    if (bufferedBits >= 8) {
      bufferedBits -= 8;
      bytes.push((buffer >> bufferedBits) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

/** Encodes bytes as padded RFC 4648 base32. */
export function base32Encode(bytes: Uint8Array): string {
  let text = "";
  let buffer = 0;
  let bufferedBits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bufferedBits += 8;
    while (bufferedBits >= 5) {
      bufferedBits -= 5;
      text += base32Alphabet[(buffer >> bufferedBits) & 0x1f];
    }
  }
  if (bufferedBits > 0) text += base32Alphabet[(buffer << (5 - bufferedBits)) & 0x1f];
  return text.padEnd(Math.ceil(text.length / 8) * 8, "=");
}

/** A new 160-bit secret (the size RFC 4226 recommends for HMAC-SHA1): 32 base32 characters, no padding needed. */
export function generateTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** The code an authenticator app shows at `at` for `secretBase32`. */
export function totpCode(secretBase32: string, at: Date = new Date(), options: TotpOptions = {}): string {
  return hotp(totpKey(secretBase32), timeStep(at, options), options);
}

/** Whether `code` is the code of the window holding `at` or of the one before (a code typed just as it rolled over). */
export function totpMatches(secretBase32: string, code: string, at: Date = new Date(), options: TotpOptions = {}): boolean {
  const key = totpKey(secretBase32);
  const step = timeStep(at, options);
  const typed = Buffer.from(code.replace(/\s/g, ""));
  return [step, step - 1n].filter((candidate) => candidate >= 0n).some((candidate) => {
    const expected = Buffer.from(hotp(key, candidate, options));
    return expected.length === typed.length && timingSafeEqual(expected, typed);
  });
}

/** When the code valid at `at` stops being the current one. */
export function totpWindowEndsAt(at: Date = new Date(), stepSeconds = defaultStepSeconds): Date {
  const stepMs = stepSeconds * 1000;
  return new Date((Math.floor(at.getTime() / stepMs) + 1) * stepMs);
}

function totpKey(secretBase32: string): Buffer {
  const key = base32Decode(secretBase32);
  if (key.length === 0) throw new InvalidTotpSecretError("the secret is empty");
  return key;
}

function timeStep(at: Date, options: TotpOptions): bigint {
  return BigInt(Math.floor(at.getTime() / 1000 / (options.stepSeconds ?? defaultStepSeconds)));
}

/** RFC 4226 HOTP with RFC 6238's choice of hash and digit count. */
function hotp(key: Buffer, counter: bigint, options: TotpOptions): string {
  const digits = options.digits ?? 6;
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(counter);
  const mac = createHmac(options.algorithm ?? "sha1", key).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const truncated = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(truncated % 10 ** digits).padStart(digits, "0");
}
