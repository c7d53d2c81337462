import { describe, expect, it } from "vitest";
import { defaultRateLimitWaitSeconds, maxRateLimitWaitSeconds, rateLimitRetryAt } from "#shared/domain/reauth-safety.ts";
import { rateLimitOf, retryAfterSeconds } from "#shared/login/rate-limit.ts";

const now = new Date("2025-03-04T10:00:00Z");
const shown = (siteMessage: string, status = 200) => rateLimitOf({ status, headers: {}, siteMessage }, now);

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
    // Keycloak's brute-force detection
    ["Account is temporarily disabled; contact your administrator or retry later.", null],
    // Nextcloud's throttle, Wordfence
    ["Too many requests were sent from your IP. Retry in 30 seconds.", 30],
    ["You have been locked out due to too many invalid login attempts.", null],
    // phpBB-style count limit
    ["You exceeded the maximum allowed number of login attempts.", null],
    ["Rate limit exceeded. Try again in 1 hour.", 3600],
  ])("%s", (message, wait) => {
    expect(shown(message)).toEqual({ retryAfterSeconds: wait });
  });

  it.each([
    "Invalid Email or password.",
    "Incorrect username or password. Please try again.",
    "The password you entered for the username admin is incorrect. Lost your password?",
    "Your password must not contain too many repeated characters.",
    "Please enter the correct username and password for a staff account.",
  ])("a wrong password is not a rate limit: %s", (message) => {
    expect(shown(message)).toBeNull();
  });

  it("reads HTTP 429 and Retry-After as seconds or an HTTP-date, whatever the body says", () => {
    expect(rateLimitOf({ status: 429, headers: {}, siteMessage: null }, now)).toEqual({ retryAfterSeconds: null });
    expect(rateLimitOf({ status: 429, headers: { "retry-after": "120" }, siteMessage: null }, now)).toEqual({ retryAfterSeconds: 120 });
    expect(rateLimitOf({ status: 403, headers: { "retry-after": "Tue, 04 Mar 2025 10:15:00 GMT" }, siteMessage: null }, now)).toEqual({ retryAfterSeconds: 900 });
  });

  it("leaves a 503's Retry-After (the site is down, the account is not limited) and an unreadable one alone", () => {
    expect(rateLimitOf({ status: 503, headers: { "retry-after": "120" }, siteMessage: null }, now)).toBeNull();
    expect(retryAfterSeconds("soon", now)).toBeNull();
    expect(retryAfterSeconds("Tue, 04 Mar 2025 09:00:00 GMT", now)).toBe(0);
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
