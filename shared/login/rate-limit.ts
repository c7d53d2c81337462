import type { IncomingHttpHeaders } from "node:http";

/**
 * Recognising a site that limits login attempts (HTTP 429, `Retry-After`, or its own "too many
 * attempts" / "account locked" message), so a flow stops there instead of sending the password again:
 * each further attempt may lengthen the lockout or count towards a permanent one.
 */

export interface RateLimit {
  /** How long the site asks to wait, when it says (Retry-After, or "try again in 20 minutes"); uncapped. */
  retryAfterSeconds: number | null;
}

const tooManyAttempts = /\btoo many\b(?:\s+\S+){0,3}?\s+(?:attempts|tries|requests|logins|sign-?ins|failures)\b/i;
const lockout = [
  tooManyAttempts,
  /\b(?:exceeded|reached)\b.{0,40}\b(?:number of|limit of|maximum)\b.{0,40}\b(?:attempts|tries|logins)\b/i,
  /\btry again later\b/i,
  /\b(?:try again|retry|wait)\b.{0,20}\bin\s+\d+\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)\b/i,
  /\bwait\s+\d+\s*(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)\s+before\b/i,
  /\btemporarily\s+(?:locked|blocked|disabled|suspended|restricted)\b/i,
  /\b(?:account|user|login)\s+(?:\S+\s+){0,2}?(?:is|has been|was)\s+(?:temporarily\s+)?locked\b/i,
  /\baccount\s+locked\b/i,
  /\b(?:been|are|were|is)\s+locked out\b/i,
  /\brate[- ]limit(?:ed)?\b/i,
];
const waitInText = /\b(\d+)\s*(seconds?|secs?|minutes?|mins?|hours?|hrs?)\b/i;
const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600 };

/**
 * A rate-limit or lockout answer, or null. `siteMessage` is the site's own error text as the engine
 * extracted it; a 503's Retry-After means the site is down, not that this account is limited.
 */
export function rateLimitOf(answer: { status: number; headers: IncomingHttpHeaders; siteMessage: string | null }, now: Date): RateLimit | null {
  const retryAfter = answer.status >= 400 && answer.status < 500 ? retryAfterSeconds(answer.headers["retry-after"], now) : null;
  const message = answer.siteMessage ?? "";
  const limitedByMessage = lockout.some((pattern) => pattern.test(message));
  if (answer.status !== 429 && retryAfter === null && !limitedByMessage) return null;
  return { retryAfterSeconds: retryAfter ?? (limitedByMessage ? waitInMessage(message) : null) };
}

/** `Retry-After` as delay-seconds or an HTTP-date (RFC 9110, 10.2.3); null when absent or unreadable. */
export function retryAfterSeconds(header: string | string[] | undefined, now: Date): number | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

function waitInMessage(message: string): number | null {
  const match = waitInText.exec(message);
  if (!match) return null;
  return Number(match[1]) * unitSeconds[match[2]!.toLowerCase()[0]!]!;
}
