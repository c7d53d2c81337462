import { createServer } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Deadline } from "#shared/deadline.ts";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import type { LoginTarget } from "#shared/login/types.ts";
import { listenOnLoopback } from "../sites/site-http.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";

/**
 * The browser engine's page load gives up at the step's deadline, not at its own navigation limit
 * (20 s): the failure names the limit the load had.
 */

let site: Awaited<ReturnType<typeof listenOnLoopback>>;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;

beforeAll(async () => {
  // Takes every request and never answers it.
  site = await listenOnLoopback(createServer(() => undefined));
  chromium = await loginChromiumForTests();
}, 120_000);

afterAll(async () => {
  const left = chromium?.running() ?? [];
  await chromium?.dispose();
  await site?.stop();
  expect(left, "Chromium processes left behind by the engine").toEqual([]);
});

it("a page that never loads ends the step site_unreachable within the step's deadline", async () => {
  const engine = createBrowserLoginEngine({ openBrowser: chromium.openBrowser });
  const target: LoginTarget = { domain: "127.0.0.1", loginUrl: `http://127.0.0.1:${site.port}/login`, allowedDomains: [] };
  const outcome = await engine.start(target, Deadline.in(1_000));
  if (outcome.kind !== "failure") throw new Error(`expected a failure, got ${outcome.kind}`);
  expect(outcome.errorCode).toBe("site_unreachable");
  const limit = /did not load \/login within (\d+) ms$/.exec(outcome.message)?.[1];
  expect(limit, outcome.message).toBeDefined();
  expect(Number(limit)).toBeLessThanOrEqual(1_000);
});
