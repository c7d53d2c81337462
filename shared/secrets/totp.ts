import { Secret, TOTP } from "otpauth";

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

const defaultStepSeconds = 30;
/** Characters left over after the last full 8-character group that can hold whole bytes (1, 2, 3 or 4 bytes). */
const validRemainders = new Set([0, 2, 4, 5, 7]);

/**
 * The secret's base32 symbols, read case-insensitively, without spaces or `=` padding, as secrets are
 * typed or shown in groups. Checked here rather than by the library, whose error names the character.
 */
function base32Symbols(text: string): string {
  const symbols = text.replace(/[\s=]/g, "").toUpperCase();
  if (!/^[A-Z2-7]*$/.test(symbols)) throw new InvalidTotpSecretError("only the letters A-Z and the digits 2-7 are base32");
  if (!validRemainders.has(symbols.length % 8)) {
    throw new InvalidTotpSecretError(`a base32 text of ${symbols.length} characters cannot end on a whole byte`);
  }
  return symbols;
}

/** Decodes base32 case-insensitively, ignoring spaces and `=` padding. */
export function base32Decode(text: string): Buffer {
  return Buffer.from(Secret.fromBase32(base32Symbols(text)).bytes);
}

/** Encodes bytes as padded RFC 4648 base32. */
export function base32Encode(bytes: Uint8Array): string {
  const text = new Secret({ buffer: Uint8Array.from(bytes).buffer }).base32;
  return text.padEnd(Math.ceil(text.length / 8) * 8, "=");
}

/** A new 160-bit secret (the size RFC 4226 recommends for HMAC-SHA1): 32 base32 characters, no padding needed. */
export function generateTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The code an authenticator app shows at `at` for `secretBase32`. */
export function totpCode(secretBase32: string, at: Date = new Date(), options: TotpOptions = {}): string {
  return TOTP.generate({ ...totpSettings(secretBase32, options), timestamp: at.getTime() });
}

/** Whether `code` is the code of the window holding `at` or of the one before (a code typed just as it rolled over). */
export function totpMatches(secretBase32: string, code: string, at: Date = new Date(), options: TotpOptions = {}): boolean {
  const settings = totpSettings(secretBase32, options);
  const token = code.replace(/\s/g, "");
  // The library compares bytes of equal length only: anything but the right number of digits is no code.
  if (token.length !== settings.digits || !/^\d+$/.test(token)) return false;
  const timestamp = at.getTime();
  // The library's window of 1 also takes the next window's code, which an authenticator does not show yet.
  const delta = TOTP.validate({ ...settings, token, timestamp, window: 1 });
  return delta === 0 || (delta === -1 && TOTP.counter({ period: settings.period, timestamp }) > 0);
}

/** When the code valid at `at` stops being the current one. */
export function totpWindowEndsAt(at: Date = new Date(), stepSeconds = defaultStepSeconds): Date {
  return new Date(at.getTime() + TOTP.remaining({ period: stepSeconds, timestamp: at.getTime() }));
}

function totpSettings(secretBase32: string, options: TotpOptions) {
  const secret = Secret.fromBase32(base32Symbols(secretBase32));
  if (secret.bytes.length === 0) throw new InvalidTotpSecretError("the secret is empty");
  return {
    secret,
    algorithm: (options.algorithm ?? "sha1").toUpperCase(),
    digits: options.digits ?? 6,
    period: options.stepSeconds ?? defaultStepSeconds,
  };
}
