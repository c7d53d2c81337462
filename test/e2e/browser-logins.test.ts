import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Kernel from "@onkernel/sdk";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openContextWithState } from "#shared/login/browser/browser-state.ts";
import { totpCode } from "#shared/secrets/totp.ts";
import { scriptShapes, startScriptSites, type ScriptShape, type ScriptSites } from "../sites/script-sites.ts";
import { chromiumChildren, loginChromiumForTests } from "../support/login-chromium.ts";
import { downloadedSession, driveLogin, flowStatusesAcrossDelete, nextFlowState, type Connection } from "../support/login-flows.ts";
import { eventually } from "../support/poll.ts";
import { officialClient, startTestStack } from "../support/stack.ts";
import { patientMs } from "../support/patience.ts";

let sites: ScriptSites;
let stack: Awaited<ReturnType<typeof startTestStack>>;
let client: Kernel;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let checker: Browser;
/** This file's own temporary directory, so that what the flows leave in it is theirs alone. */
let flowTmp: string;
const outerTmp = process.env.TMPDIR;

beforeAll(async () => {
  flowTmp = mkdtempSync(join(tmpdir(), "acs-browser-logins-"));
  process.env.TMPDIR = flowTmp;
  sites = await startScriptSites();
  // A flow waits 30 s for input and lives 42 s; a 300 s health-check interval runs in 15 s.
  stack = await startTestStack({ timeScale: 0.05 });
  client = officialClient(stack);
  chromium = await loginChromiumForTests();
  checker = await chromium.launch();
});

afterAll(async () => {
  await checker?.close();
  await chromium?.dispose();
  await stack?.stop();
  await sites?.stop();
  if (outerTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = outerTmp;
  rmSync(flowTmp, { recursive: true, force: true });
});

/** The service's login browsers: every Chromium child but the one this file checks profiles with. */
const loginBrowsers = () => chromiumChildren().length - 1;

let profiles = 0;
function connectionFor(shape: ScriptShape, extra: Record<string, unknown> = {}) {
  return client.auth.connections.create({ domain: "127.0.0.1", profile_name: `${shape}-${++profiles}`, login_url: sites.loginUrl(shape), health_checks: false, ...extra });
}

/** What the site's user types or picks at a step: the test plays the person answering the flow. */
function answerFor(connection: Connection, password = sites.user.password) {
  const fields = connection.fields ?? [];
  if (fields.length > 0) {
    const values: Record<string, string> = {};
    for (const field of fields) {
      if (field.type === "identifier") values[field.id] = sites.user.email;
      else if (field.type === "password") values[field.id] = password;
      else if (field.type === "totp_code") values[field.id] = totpCode(sites.user.totpSecret);
      else if (field.type === "code") values[field.id] = sites.lastCodeSent() ?? "";
    }
    return { field_values: values };
  }
  const authenticator = (connection.choices ?? []).find((choice) => choice.type === "mfa_method" && /authenticator/i.test(choice.label));
  if (!authenticator) throw new Error(`no answer for the step: ${JSON.stringify({ fields, choices: connection.choices })}`);
  return { selected_choice_id: authenticator.id };
}

const logIn = (id: string) => driveLogin(client, id, (connection) => answerFor(connection));

/** Opens the shape's signed-in page in a fresh context holding only the profile, and answers whom it shows. */
async function signedInAs(profileName: string, shape: ScriptShape): Promise<string | null> {
  const context = await openContextWithState(checker, await downloadedSession(client, profileName));
  try {
    const page = await context.newPage();
    await page.goto(sites.homeUrl(shape));
    const who = page.locator("[data-signed-in-as]");
    return await who
      .first()
      .waitFor({ timeout: patientMs(10_000) })
      .then(() => who.first().textContent(), () => null);
  } finally {
    await context.close();
  }
}

describe("logins built by script, through the official client", () => {
  it.each(scriptShapes)("logs in to the %s site in a browser, and the downloaded profile opens it logged in", async (shape) => {
    const created = await connectionFor(shape);
    const before = sites.logins(shape);

    const states = await logIn(created.id);

    const ended = states.at(-1) as Connection;
    expect(ended).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", browser_session_id: null });
    expect(states.slice(0, -1).every((state) => state.browser_session_id?.startsWith("bs_"))).toBe(true);
    expect(states.length).toBeGreaterThan(1);
    expect(sites.logins(shape)).toBe(before + 1);
    expect(await signedInAs(created.profile_name, shape)).toBe(sites.user.name);
  });

  it("asks again with the site's message after a wrong password, ends FAILED credentials_invalid at the third, and leaves the profile as it was", async () => {
    const created = await connectionFor("inline");
    await logIn(created.id);
    const profileBefore = await downloadedSession(client, created.profile_name);

    await client.auth.connections.login(created.id);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const waiting = await nextFlowState(client, created.id);
      expect(waiting.flow_status).toBe("IN_PROGRESS");
      if (attempt > 1) expect(waiting.website_error).toBe("Incorrect email or password.");
      await client.auth.connections.submit(created.id, answerFor(waiting, `wrong horse ${attempt}`));
      await eventually(async () => ((await client.auth.connections.retrieve(created.id)).flow_step !== "AWAITING_INPUT" ? true : undefined), "the submit to be taken");
    }
    const ended = await nextFlowState(client, created.id);

    expect(ended).toMatchObject({ flow_status: "FAILED", error_code: "credentials_invalid", browser_session_id: null });
    expect(await downloadedSession(client, created.profile_name)).toEqual(profileBefore);
    await eventually(async () => (loginBrowsers() === 0 ? true : undefined), "the failed flow's browser to close");
  });

  it("ends the flow CANCELED when its connection is deleted mid-flow, and closes its browser", async () => {
    const created = await connectionFor("spa");
    await client.auth.connections.login(created.id);
    const waiting = await nextFlowState(client, created.id);
    expect(waiting.browser_session_id).toMatch(/^bs_/);
    expect(loginBrowsers()).toBe(1);
    const seen = await flowStatusesAcrossDelete(client, created.id);

    expect(seen.at(-1)).toBe("CANCELED");
    await eventually(async () => (loginBrowsers() === 0 ? true : undefined), "the canceled flow's browser to close");
  });

  // The budget of one flow, twenty times.
  it("leaves no Chromium process and no temporary directory behind after 20 browser flows in a row", async () => {
    const tmpBefore = readdirSync(flowTmp).sort();
    for (let flow = 0; flow < 20; flow++) {
      const created = await connectionFor("spa");
      const states = await logIn(created.id);
      expect(states.at(-1)?.flow_status).toBe("SUCCESS");
    }
    await eventually(async () => (loginBrowsers() === 0 ? true : undefined), "every flow's browser to close");
    // A browser's directory goes once it has disconnected, and an earlier test's may go meanwhile too.
    await eventually(async () => (readdirSync(flowTmp).every((entry) => tmpBefore.includes(entry)) ? true : undefined), "every flow's temporary directory to go");
  }, patientMs(20 * 5_000));
});

describe("health checks and re-auth of a browser login", () => {
  it.each(["spa", "idfirst"] as const)(
    "notices the %s site ended the session, and re-authenticates in the browser with the stored credential and TOTP secret",
    async (shape) => {
      const credential = await client.credentials.create({
        name: `${shape}-credential`,
        domain: "127.0.0.1",
        values: { identifier: sites.user.email, password: sites.user.password },
        totp_secret: sites.user.totpSecret,
      });
      const created = await connectionFor(shape, { credential: { name: credential.name }, health_checks: true, health_check_interval: 300 });
      const ended = (await logIn(created.id)).at(-1);
      expect(ended).toMatchObject({ flow_status: "SUCCESS", can_reauth: true });
      const loginsBefore = sites.logins(shape);

      sites.revokeSessions(shape);

      const events = await eventually(
        async () => {
          const items = (await client.auth.connections.timeline(created.id, { limit: 100 })).getPaginatedItems();
          return items.some((event) => event.type === "reauth" && event.status === "SUCCESS") ? items.reverse() : undefined;
        },
        "a successful re-auth on the timeline",
        60,
      );
      const loggedOut = events.findIndex((event) => event.type === "health_check" && event.status === "NEEDS_AUTH");
      const reauthed = events.findIndex((event) => event.type === "reauth" && event.status === "SUCCESS");
      expect(loggedOut).toBeGreaterThanOrEqual(0);
      expect(reauthed).toBeGreaterThan(loggedOut);
      expect(sites.logins(shape)).toBe(loginsBefore + 1);
      expect(await client.auth.connections.retrieve(created.id)).toMatchObject({ status: "AUTHENTICATED", flow_type: "REAUTH", flow_status: "SUCCESS" });
      expect(await signedInAs(created.profile_name, shape)).toBe(sites.user.name);
      await client.auth.connections.delete(created.id);
    },
  );
});
