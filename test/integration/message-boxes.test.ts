import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import type { LoginEngine, LoginTarget, Submission } from "#shared/login/types.ts";
import { messageBoxShapes, startMessageBoxSite, type MessageBoxShape, type MessageBoxSite } from "../sites/message-box-site.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { asInput, asSuccess, submitThroughJson, type Input } from "../support/engine-steps.ts";
import { patientMs } from "../support/patience.ts";

/**
 * A wrong password told by the page's script, in a message box with a title, a toast or an inline
 * script's message: the browser engine reports the text that says what happened, not the box's title
 * nor nothing.
 */

let site: MessageBoxSite;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let engine: LoginEngine;

beforeAll(async () => {
  site = await startMessageBoxSite();
  chromium = await loginChromiumForTests();
  engine = createBrowserLoginEngine({ openBrowser: chromium.openBrowser });
}, patientMs(120_000));

afterAll(async () => {
  const left = chromium?.running() ?? [];
  await chromium?.dispose();
  await site?.stop();
  expect(left, "Chromium processes left behind by the engine").toEqual([]);
});

const target = (shape: MessageBoxShape): LoginTarget => ({ domain: "127.0.0.1", loginUrl: site.loginUrl(shape), allowedDomains: [] });

function credentials(step: Input, password: string): Submission {
  const values: Record<string, string> = {};
  for (const field of step.prompt.fields) values[field.id] = field.type === "password" ? password : site.user.name;
  return { field_values: values };
}

describe("the site's message drawn by its script, through the browser engine", () => {
  it.each(messageBoxShapes)("%s: a wrong password gives the message's text, then the right one logs in", async (shape) => {
    const first = asInput(await engine.start(target(shape)));
    expect(first.websiteError).toBeNull();

    const rejected = asInput(await submitThroughJson(engine, target(shape), first, credentials(first, "wrong horse")));
    expect(rejected.websiteError).toBe(site.rejection);

    const success = asSuccess(await submitThroughJson(engine, target(shape), rejected, credentials(rejected, site.user.password)));
    expect(success.postLoginUrl).toBe(site.homeUrl(shape));
  }, patientMs(60_000));
});
