import type { IncomingHttpHeaders } from "node:http";

/**
 * Recognising a site that limits login attempts (HTTP 429, `Retry-After`, or its own "too many
 * attempts" / "account locked" message), so a flow stops there instead of sending the password again:
 * each further attempt may lengthen the lockout or count towards a permanent one.
 *
 * Only strong wording counts: "Invalid password. Please try again later." is a wrong password, and
 * "Please wait 30 seconds before requesting another code" a resend cooldown. A sentence that warns of
 * a lockout to come ("2 attempts left before your account is locked", "If your account is locked,
 * contact support") says the site still takes attempts, and a rule stated to everyone ("Accounts are
 * locked after 5 failed attempts") answers no attempt.
 */

export interface RateLimit {
  /** How long the site asks to wait, when it says (Retry-After, or "try again in 20 minutes"); uncapped. */
  retryAfterSeconds: number | null;
  /** The site's message that told it, if one did. */
  message: string | null;
}

const unit = String.raw`(?:seconds?|secs?|minutes?|mins?|hours?|hrs?)`;
const amount = String.raw`(?:\d+|a few|a couple(?: of)?|several)`;
const throttleWords = [
  /\btoo many\b(?:\s+\S+){0,3}?\s+(?:attempts|tries|requests|logins|sign-?ins|failures)\b/i,
  /\b(?:exceeded|reached)\b.{0,40}\b(?:number of|limit of|maximum)\b.{0,40}\b(?:attempts|tries|logins)\b/i,
  new RegExp(String.raw`\b(?:try(?:ing)? again|retry(?:ing)?|log(?:ging)? in again|sign(?:ing)? in again)\s+(?:in|after)\s+(?:about\s+)?${amount}\s*${unit}\b`, "i"),
  new RegExp(String.raw`\bwait\s+(?:for\s+)?${amount}\s*${unit}\s+(?:before|then)\s+(?:you\s+)?(?:try|trying|retry|retrying|attempting|logging|log|signing|sign)\b`, "i"),
  /\btemporarily\s+(?:locked|blocked|disabled|suspended|restricted)\b/i,
  /\b(?:account|user|login)\s+(?:\S+\s+){0,2}?(?:is|has been|was)\s+(?:temporarily\s+)?locked\b/i,
  /\baccount\s+locked\b/i,
  /\b(?:been|are|were|is)\s+locked out\b/i,
  /\brate[- ]limit(?:ed)?\b/i,
];
/** A lockout still to come: the attempt itself was taken. */
const warningWords =
  /\b(?:will|would|may|might|could|can)\s+(?:\w+\s+){0,2}?(?:locked|blocked|disabled|suspended|lock|block|disable|suspend)\b|\battempts?\s+(?:left|remaining)\b|\bremaining\s+attempts?\b|\bbefore\s+(?:too many|your account|you(?:'re| are| will be| get)? locked|being locked|the account)\b/i;
/**
 * A condition on the throttle phrase itself, so a lockout the site only supposes: in its clause before
 * it ("If your account is locked, contact support") or right after it ("… rate-limited if you exceed
 * 10 attempts"). An `if` of another clause ("… or reset your password if you forgot it") is not one.
 */
const conditionBefore = /\b(?:if|unless|otherwise|in case)\b[^,;:()]*$/i;
const conditionAfter = /^(?:\s+(?!(?:or|and|but|then)\b)[\w'-]+){0,4}?\s+(?:if|unless)\b/i;
/**
 * A rule a login page states to everyone ("Accounts are temporarily locked after 5 failed attempts"),
 * not an answer to this attempt; a lockout told as done ("has been locked after 5 failed attempts") is.
 */
const policyWords = /\bafter\s+(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|several|multiple|repeated|too many)\s+(?:\S+\s+){0,3}?(?:attempts|tries|failures|logins)\b/i;
const happenedWords = /\b(?:has|have|had)\s+been\b|\b(?:was|were|got)\b/i;
const waitInText = new RegExp(String.raw`\b(\d+)\s*(${unit})\b`, "i");
const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600 };

/**
 * A rate-limit or lockout answer, or null. `messages` are the texts the page shows as messages
 * (site-message.ts), not only the one reported as the error: a throttle may show in a notice. A 503's
 * Retry-After means the site is down, not that this account is limited.
 */
export function rateLimitOf(answer: { status: number; headers: IncomingHttpHeaders; messages: readonly string[] }, now: Date): RateLimit | null {
  const retryAfter = answer.status >= 400 && answer.status < 500 ? retryAfterSeconds(answer.headers["retry-after"], now) : null;
  const message = answer.messages.find(saysThrottled) ?? null;
  if (answer.status !== 429 && retryAfter === null && message === null) return null;
  return { retryAfterSeconds: retryAfter ?? (message === null ? null : waitInMessage(message)), message };
}

function saysThrottled(message: string): boolean {
  return sentences(message).some(
    (sentence) => !warningWords.test(sentence) && !statesPolicy(sentence) && throttleWords.some((pattern) => unconditional(sentence, pattern.exec(sentence))),
  );
}

function statesPolicy(sentence: string): boolean {
  return policyWords.test(sentence) && !happenedWords.test(sentence);
}

function unconditional(sentence: string, throttle: RegExpExecArray | null): boolean {
  if (!throttle) return false;
  return !conditionBefore.test(sentence.slice(0, throttle.index)) && !conditionAfter.test(sentence.slice(throttle.index + throttle[0].length));
}

function sentences(message: string): string[] {
  return message.split(/(?<=[.!?;])\s+|\s*\n\s*/);
}

/** `Retry-After` as delay-seconds or an HTTP-date (RFC 9110, 10.2.3); null when absent or unreadable. */
function retryAfterSeconds(header: string | string[] | undefined, now: Date): number | null {
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
