import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginTarget, StepOutcome, Submission } from "#shared/login/types.ts";
import { startAppLoginSite, type AppLoginSite, type AppName } from "../sites/app-login-site.ts";
import { asInput, submitThroughJson, type Input } from "../support/engine-steps.ts";

let site: AppLoginSite;

beforeAll(async () => {
  site = await startAppLoginSite();
});

afterAll(async () => {
  await site?.stop();
});

const engine = createLoginEngine({ allowPrivateTargets: true });

const target = (app: AppName): LoginTarget => ({ domain: "127.0.0.1", loginUrl: site.loginUrl(app), allowedDomains: [] });

const answer = (app: AppName, step: Input, submission: Submission) => submitThroughJson(engine, target(app), step, submission);

function credentials(step: Input, password: string): Submission {
  const values: Record<string, string> = {};
  for (const field of step.prompt.fields) values[field.id] = field.type === "password" ? password : site.user.name;
  return { field_values: values };
}

describe("the site's own message after a wrong password, through the engine", () => {
  it.each([
    { app: "wordpress" as const, expected: "ERROR: The password you entered for the username ada is incorrect. Lost your password?" },
    { app: "phpmyadmin" as const, expected: "mysqli::real_connect(): (HY000/1045): Access denied for user 'ada'@'localhost' (using password: YES)" },
    { app: "router" as const, expected: "Access denied" },
  ])("$app: the same form again with its message, then the right password logs in", async ({ app, expected }) => {
    const first = asInput(await engine.start(target(app)));

    const rejected = asInput(await answer(app, first, credentials(first, "wrong horse")));

    expect(rejected.websiteError).toBe(expected);
    expect(rejected.prompt).toEqual(first.prompt);
    expect(await answer(app, rejected, credentials(rejected, site.user.password))).toMatchObject({ kind: "success" });
  });

  it("a site that repeats the typed password in its message: no message rather than the password", async () => {
    const first = asInput(await engine.start(target("echo")));

    const rejected = asInput(await answer("echo", first, credentials(first, "tr0ub4dor&3")));

    expect(rejected.websiteError).toBeNull();
    // The engine's sealed state keeps the typed password for re-auth; what a person or client sees must not.
    expect(JSON.stringify(rejected.prompt)).not.toContain("tr0ub4dor");
  });

  it("three rejections in a row still end the flow with credentials_invalid, quoting the site's message", async () => {
    let step = asInput(await engine.start(target("wordpress")));
    for (const attempt of [1, 2]) step = asInput(await answer("wordpress", step, credentials(step, `wrong ${attempt}`)));

    const failure = await answer("wordpress", step, credentials(step, "wrong 3"));

    expect(failure).toEqual({
      kind: "failure",
      errorCode: "credentials_invalid",
      message: "the site rejected 3 attempts in a row: ERROR: The password you entered for the username ada is incorrect. Lost your password?",
    });
  });
});
