import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginTarget, StepOutcome } from "#shared/login/types.ts";
import { startGuardedLoginSite, type GuardedLoginSite } from "../sites/guarded-login-site.ts";
import { asInput, type Input } from "../support/engine-steps.ts";

let site: GuardedLoginSite;
let target: LoginTarget;

beforeAll(async () => {
  site = await startGuardedLoginSite();
  target = { domain: "127.0.0.1", loginUrl: site.loginUrl, allowedDomains: [] };
});

afterEach(() => {
  site.throttle(null);
  site.dashboardNotice(null);
  site.signInPolicy(null);
});

afterAll(async () => {
  await site?.stop();
});

const engine = createLoginEngine({ allowPrivateTargets: true });

/** A person typing at the prompt (each step through JSON, as between Lambdas). */
function type(step: Input, password: string): Promise<StepOutcome> {
  return engine.submit(target, JSON.parse(JSON.stringify(step.state)), { field_values: { identifier: site.user.email, password } });
}

describe("an interactive login on a site that limits attempts", () => {
  it("keeps three tries for a person typing wrong passwords", async () => {
    const before = site.submissions();
    let step = asInput(await engine.start(target));
    step = asInput(await type(step, "wrong one"));
    expect(step.websiteError).toBe("Invalid Email or password.");
    step = asInput(await type(step, "wrong two"));

    const third = await type(step, "wrong three");

    expect(third).toMatchObject({ kind: "failure", errorCode: "credentials_invalid" });
    expect(site.submissions()).toBe(before + 3);
  });

  it("ends rate_limited, not as a wrong password, when the site answers 429 with Retry-After", async () => {
    let step = asInput(await engine.start(target));
    step = asInput(await type(step, "wrong one"));
    site.throttle({ kind: "http_429", retryAfter: "120" });

    const limited = await type(step, site.user.password);

    expect(limited).toMatchObject({ kind: "failure", errorCode: "rate_limited", retryAfterSeconds: 120 });
  });

  it("reads a Retry-After given as an HTTP-date", async () => {
    const step = asInput(await engine.start(target));
    site.throttle({ kind: "http_429", retryAfter: new Date(Date.now() + 10 * 60_000).toUTCString() });

    const limited = await type(step, site.user.password);

    expect(limited).toMatchObject({ kind: "failure", errorCode: "rate_limited" });
    expect((limited as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(500);
    expect((limited as { retryAfterSeconds: number }).retryAfterSeconds).toBeLessThanOrEqual(600);
  });

  it("ends rate_limited on a lockout told only in the page, with the wait it names, and never echoes the password", async () => {
    const step = asInput(await engine.start(target));
    site.throttle({ kind: "message", message: "Too many failed login attempts. Please try again in 20 minutes." });

    const limited = await type(step, site.user.password);

    expect(limited).toMatchObject({ kind: "failure", errorCode: "rate_limited", retryAfterSeconds: 1200 });
    expect((limited as { message: string }).message).toContain("Too many failed login attempts");
    expect(JSON.stringify(limited)).not.toContain(site.user.password);
  });

  it("ends rate_limited on a throttle that only says when to come back, shown with the form again", async () => {
    let step = asInput(await engine.start(target));
    step = asInput(await type(step, "wrong one"));
    site.throttle({ kind: "message", message: "Please try again in a few minutes." });

    const limited = await type(step, site.user.password);

    expect(limited).toMatchObject({ kind: "failure", errorCode: "rate_limited" });
  });

  it.each(["Invalid password. Please try again later.", "Wrong password. You have 2 attempts left before too many failed attempts lock your account."])(
    "keeps asking when the form comes back with a rejection that mentions a lockout: %s",
    async (message) => {
      const step = asInput(await engine.start(target));
      site.throttle({ kind: "message", message });

      const again = asInput(await type(step, "wrong one"));

      expect(again.websiteError).toBe(message);
    },
  );
});

describe("a sign-in page that always speaks of lockouts", () => {
  it.each(["Accounts are temporarily locked after 5 failed attempts.", "Account locked? Contact your administrator."])(
    "takes a wrong password as a rejection and the right one as a login, the sentence being no answer to either: %s",
    async (sentence) => {
      site.signInPolicy(sentence);
      const before = site.submissions();
      const step = asInput(await engine.start(target));

      const rejected = asInput(await type(step, "wrong one"));
      const signedIn = await type(rejected, site.user.password);

      expect(rejected.websiteError).toBe("Invalid Email or password.");
      expect(signedIn).toMatchObject({ kind: "success", postLoginUrl: `${site.url}/dashboard` });
      expect(site.submissions()).toBe(before + 2);
    },
  );

  it("still ends rate_limited when the answer to the submission says so", async () => {
    site.signInPolicy("Accounts are temporarily locked after 5 failed attempts.");
    const step = asInput(await engine.start(target));
    site.throttle({ kind: "message", message: "Too many failed login attempts. Try again in 20 minutes." });

    const limited = await type(step, site.user.password);

    expect(limited).toMatchObject({ kind: "failure", errorCode: "rate_limited", retryAfterSeconds: 1200 });
  });
});

describe("a login that succeeds on a page that speaks of attempts", () => {
  it.each([
    "There have been too many failed login attempts on your account since your last visit.",
    "Couldn't load your feed. Please try again in a few minutes.",
  ])("is a success, not a rate limit: %s", async (notice) => {
    site.dashboardNotice(notice);
    const step = asInput(await engine.start(target));

    const signedIn = await type(step, site.user.password);

    expect(signedIn).toMatchObject({ kind: "success", postLoginUrl: `${site.url}/dashboard` });
  });
});
