import { describe, expect, it } from "vitest";
import { defaultRateLimitWaitSeconds, maxRateLimitWaitSeconds, rateLimitRetryAt } from "#shared/domain/reauth.ts";
import { rateLimitOf } from "#shared/login/rate-limit.ts";

const now = new Date("2025-03-04T10:00:00Z");
const shown = (message: string, status = 200) => rateLimitOf({ status, headers: {}, messages: [message] }, now);

describe("recognising a site that limits login attempts", () => {
  it.each([
    // MediaWiki
    ["You have made too many recent login attempts. Please wait 5 minutes before trying again.", 300],
    // WordPress with Limit Login Attempts Reloaded
    ["ERROR: Too many failed login attempts. Please try again in 20 minutes.", 1200],
    // django-axes
    ["Account locked: too many login attempts. Please try again later.", null],
    // Devise lockable (GitLab, Mastodon, Discourse's Rails peers)
    ["Your account is locked.", null],
    ["Your account has been locked and will be unlocked in 30 minutes.", 1800],
    // Keycloak's brute-force detection
    ["Account is temporarily disabled; contact your administrator or retry later.", null],
    // Nextcloud's throttle, Wordfence
    ["Too many requests were sent from your IP. Retry in 30 seconds.", 30],
    ["You have been locked out due to too many invalid login attempts.", null],
    // phpBB-style count limit
    ["You exceeded the maximum allowed number of login attempts.", null],
    ["Rate limit exceeded. Try again in 1 hour.", 3600],
    // A throttle that names no reason, only when to come back
    ["Please try again in a few minutes.", null],
    ["Too many failed attempts. Your account will be locked for 15 minutes.", 900],
    ["Your account has been temporarily blocked. Try again after 10 minutes.", 600],
    // An `if` of another clause does not make the throttle a supposition.
    ["Too many failed login attempts, please try again in 20 minutes or reset your password if you forgot it.", 1200],
    ["Your account is temporarily locked, contact support if this keeps happening.", null],
    // A lockout told as done, even when it names the rule that caused it.
    ["Your account has been locked after 5 failed attempts. Try again in 30 minutes.", 1800],
  ])("limited: %s", (message, wait) => {
    expect(shown(message)).toEqual({ retryAfterSeconds: wait, message });
  });

  it.each([
    "Invalid Email or password.",
    "Incorrect username or password. Please try again.",
    "The password you entered for the username admin is incorrect. Lost your password?",
    "Your password must not contain too many repeated characters.",
    "Please enter the correct username and password for a staff account.",
    // "Try again later" alone is what any failure says: with a wrong credential it is a rejection.
    "Invalid password. Please try again later.",
    "Something went wrong. Please try again later.",
    "Your session expired. Please try again later.",
    // A lockout the site only supposes or warns of: the attempt was taken.
    "Invalid password. If your account is locked, contact support.",
    "Wrong password. You have 2 attempts left before too many failed attempts lock your account.",
    "Incorrect password. 3 remaining attempts before your account is locked.",
    "Invalid login. After 5 failed attempts your account will be temporarily locked.",
    "Logins are rate-limited if you exceed 10 attempts per minute.",
    "Accounts are temporarily locked for 15 minutes unless you reset the password.",
    "Unless you wait 30 minutes before trying again, your account stays locked out.",
    // A rule the login page states to everyone answers no attempt.
    "Accounts are temporarily locked after 5 failed attempts.",
    "For your security, accounts are locked after too many failed login attempts.",
    // A resend cooldown must not end an MFA flow.
    "Invalid code. Please wait 30 seconds before requesting another.",
    "The code you entered is incorrect. You can request a new code in 60 seconds.",
  ])("a rejection, not a rate limit: %s", (message) => {
    expect(shown(message)).toBeNull();
  });

  it("finds the throttle among every message the page shows, not only the one reported as the error", () => {
    const messages = ["Invalid Email or password.", "Too many failed login attempts. Please try again in 20 minutes."];
    expect(rateLimitOf({ status: 200, headers: {}, messages }, now)).toEqual({ retryAfterSeconds: 1200, message: messages[1] });
  });

  it("reads HTTP 429 and Retry-After on a 4xx as seconds or an HTTP-date, whatever the body says", () => {
    expect(rateLimitOf({ status: 429, headers: {}, messages: [] }, now)).toEqual({ retryAfterSeconds: null, message: null });
    expect(rateLimitOf({ status: 429, headers: { "retry-after": "120" }, messages: ["Invalid password."] }, now)).toEqual({ retryAfterSeconds: 120, message: null });
    expect(rateLimitOf({ status: 403, headers: { "retry-after": "Tue, 04 Mar 2025 10:15:00 GMT" }, messages: [] }, now)).toEqual({ retryAfterSeconds: 900, message: null });
    expect(rateLimitOf({ status: 429, headers: { "retry-after": "Tue, 04 Mar 2025 09:00:00 GMT" }, messages: [] }, now)).toEqual({ retryAfterSeconds: 0, message: null });
  });

  it("leaves a 503's Retry-After (the site is down, the account is not limited), a 200's, and an unreadable one alone", () => {
    expect(rateLimitOf({ status: 503, headers: { "retry-after": "120" }, messages: [] }, now)).toBeNull();
    expect(rateLimitOf({ status: 200, headers: { "retry-after": "120" }, messages: [] }, now)).toBeNull();
    expect(rateLimitOf({ status: 403, headers: { "retry-after": "soon" }, messages: [] }, now)).toBeNull();
  });
});

describe("how long the workflow waits out a rate limit", () => {
  const at = (seconds: number) => new Date(now.getTime() + seconds * 1000).toISOString();

  it("waits the site's time, a default when it says none, never more than an hour", () => {
    expect(rateLimitRetryAt(now, 600, { timeScale: 1 })).toBe(at(600));
    expect(rateLimitRetryAt(now, null, { timeScale: 1 })).toBe(at(defaultRateLimitWaitSeconds));
    expect(rateLimitRetryAt(now, 86_400, { timeScale: 1 })).toBe(at(maxRateLimitWaitSeconds));
    expect(maxRateLimitWaitSeconds).toBe(3600);
  });

  it("is scaled like every other wait of a local run", () => {
    expect(rateLimitRetryAt(now, 600, { timeScale: 0.01 })).toBe(at(6));
  });
});
