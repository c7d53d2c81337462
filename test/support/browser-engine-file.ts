import { afterAll, beforeAll, expect } from "vitest";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import type { LoginEngine } from "#shared/login/types.ts";
import { loginChromiumForTests } from "./login-chromium.ts";
import { patientMs } from "./patience.ts";

/**
 * A test file's browser login engine on the file's own Chromium, and its test site, started before
 * the file's tests and stopped after them; the file fails if a browser the engine opened still runs
 * at its end. Read `site` and `engine` inside the tests.
 */
export function browserEngineFile<Site extends { stop(): Promise<void> }>(startSite: () => Promise<Site>): { site: Site; engine: LoginEngine } {
  const file = {} as { site: Site; engine: LoginEngine };
  let chromium: Awaited<ReturnType<typeof loginChromiumForTests>> | undefined;

  beforeAll(async () => {
    file.site = await startSite();
    chromium = await loginChromiumForTests();
    file.engine = createBrowserLoginEngine({ openBrowser: chromium.openBrowser });
  }, patientMs(120_000));

  afterAll(async () => {
    const left = chromium?.running() ?? [];
    await chromium?.dispose();
    await file.site?.stop();
    expect(left, "Chromium processes left behind by the engine").toEqual([]);
  });

  return file;
}
