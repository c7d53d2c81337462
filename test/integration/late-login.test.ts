import { expect, it } from "vitest";
import type { LoginTarget } from "#shared/login/types.ts";
import { startLateLoginSite } from "../sites/late-login-site.ts";
import { browserEngineFile } from "../support/browser-engine-file.ts";
import { asInput, asSuccess, submitThroughJson } from "../support/engine-steps.ts";
import { patientMs } from "../support/patience.ts";

/**
 * A login the app draws only after its bundle has run and its server has said no session exists:
 * the browser engine keeps watching a page that shows no login yet, instead of judging it at its
 * first quiet moment.
 */

const file = browserEngineFile(startLateLoginSite);

it("finds a login dialog drawn after a quiet page and a session check in flight, and logs in", async () => {
  const { site, engine } = file;
  const target: LoginTarget = { domain: "127.0.0.1", loginUrl: site.loginUrl, allowedDomains: [] };
  const started = engine.start(target);
  // An engine that gave up on the quiet page ends the flow, and its browser, before the app asks.
  await Promise.race([site.sessionCheckAsked(), started]);
  site.answerSessionChecks();

  const first = asInput(await started);
  expect(first.prompt.fields.map((field) => field.type)).toEqual(["identifier", "password"]);

  const success = asSuccess(
    await submitThroughJson(engine, target, first, { field_values: { identifier: site.user.name, password: site.user.password } }),
  );
  expect(success.postLoginUrl).toBe(site.homeUrl);
  expect(success.session.origins).toContainEqual(expect.objectContaining({ localStorage: [expect.objectContaining({ name: "console_token" })] }));
}, patientMs(60_000));

it("waits through a sign-in that shows its progress for longer than a quiet moment, and logs in", async () => {
  const { site, engine } = file;
  site.answerSessionChecks();
  const target: LoginTarget = { domain: "127.0.0.1", loginUrl: site.progressLoginUrl, allowedDomains: [] };
  const first = asInput(await engine.start(target));

  const outcome = await submitThroughJson(engine, target, first, { field_values: { identifier: site.user.name, password: site.user.password } });

  expect(asSuccess(outcome).postLoginUrl).toBe(site.homeUrl);
}, patientMs(60_000));
