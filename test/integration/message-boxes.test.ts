import { describe, expect, it } from "vitest";
import type { LoginTarget, Submission } from "#shared/login/types.ts";
import { messageBoxShapes, startMessageBoxSite, type MessageBoxShape } from "../sites/message-box-site.ts";
import { browserEngineFile } from "../support/browser-engine-file.ts";
import { asInput, asSuccess, submitThroughJson, type Input } from "../support/engine-steps.ts";
import { patientMs } from "../support/patience.ts";

/**
 * A wrong password told by the page's script, in a message box with a title, a toast or an inline
 * script's message: the browser engine reports the text that says what happened, not the box's title
 * nor nothing.
 */

const file = browserEngineFile(startMessageBoxSite);

const target = (shape: MessageBoxShape): LoginTarget => ({ domain: "127.0.0.1", loginUrl: file.site.loginUrl(shape), allowedDomains: [] });

function credentials(step: Input, password: string): Submission {
  const values: Record<string, string> = {};
  for (const field of step.prompt.fields) values[field.id] = field.type === "password" ? password : file.site.user.name;
  return { field_values: values };
}

describe("the site's message drawn by its script, through the browser engine", () => {
  it.each(messageBoxShapes)("%s: a wrong password gives the message's text, then the right one logs in", async (shape) => {
    const first = asInput(await file.engine.start(target(shape)));
    expect(first.websiteError).toBeNull();

    const rejected = asInput(await submitThroughJson(file.engine, target(shape), first, credentials(first, "wrong horse")));
    expect(rejected.websiteError).toBe(file.site.rejection);

    const success = asSuccess(await submitThroughJson(file.engine, target(shape), rejected, credentials(rejected, file.site.user.password)));
    expect(success.postLoginUrl).toBe(file.site.homeUrl(shape));
  }, patientMs(60_000));
});
