import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StorageState } from "#shared/archive/storage-state.ts";
import { archives } from "#shared/composition/archives.ts";
import { workflowTiming } from "#shared/composition/config.ts";
import { credentials } from "#shared/composition/credentials.ts";
import { profileSessions } from "#shared/composition/profile-sessions.ts";
import { secretBox } from "#shared/composition/secrets.ts";
import { profileStore } from "#shared/composition/table.ts";
import { loginOutcomes } from "#shared/domain/flows/outcomes.ts";
import { healthCheckCore, type HealthCheckTaskInput } from "#shared/domain/health-checks.ts";
import { openContextWithState } from "#shared/login/browser/browser-state.ts";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { LoginEngine, LoginTarget, StepOutcome } from "#shared/login/types.ts";
import { startRotatingSessionSite, type RotatingSessionSite, type RotatingShape } from "../sites/rotating-session-site.ts";
import { loginChromiumForTests } from "../support/login-chromium.ts";
import { patientMs } from "../support/patience.ts";
import { loggedInUnderTestExecution, servicesOnFreshTable, uniqueOrg } from "../support/services.ts";

type Success = Extract<StepOutcome, { kind: "success" }>;

let core: Awaited<ReturnType<typeof servicesOnFreshTable>>;
let site: RotatingSessionSite;
let chromium: Awaited<ReturnType<typeof loginChromiumForTests>>;
let browserEngine: LoginEngine;
const httpEngine = createLoginEngine({ allowPrivateTargets: true });

beforeAll(async () => {
  [core, site, chromium] = await Promise.all([servicesOnFreshTable(), startRotatingSessionSite(), loginChromiumForTests()]);
  browserEngine = createBrowserLoginEngine({ openBrowser: chromium.openBrowser });
}, patientMs(120_000));

afterAll(async () => {
  const left = chromium?.running() ?? [];
  await chromium?.dispose();
  await site?.stop();
  await core?.stack.stop();
  expect(left, "Chromium processes left behind").toEqual([]);
});

const target = (shape: RotatingShape): LoginTarget => ({ domain: "127.0.0.1", loginUrl: site.loginUrl(shape), allowedDomains: [] });

/** A person's login with `engine`: the email and password typed into the form, each step's state through JSON as between Lambdas. */
async function logIn(engine: LoginEngine, shape: RotatingShape): Promise<Success> {
  const form = await engine.start(target(shape));
  if (form.kind !== "input") throw new Error(`${shape}: no login form (${JSON.stringify(form)})`);
  const values = Object.fromEntries(form.prompt.fields.map((field) => [field.id, field.type === "password" ? site.user.password : site.user.email]));
  const outcome = await engine.submit(target(shape), JSON.parse(JSON.stringify(form.state)) as typeof form.state, { field_values: values });
  if (outcome.kind !== "success") throw new Error(`${shape}: the login did not succeed (${JSON.stringify(outcome)})`);
  return outcome;
}

/** Whether the app, loaded in a fresh browser with `state`, shows its signed-in page (its own check of the token). */
async function opensSignedIn(state: StorageState, shape: RotatingShape): Promise<boolean> {
  const browser = await chromium.launch();
  try {
    const page = await (await openContextWithState(browser, state)).newPage();
    await page.goto(site.appUrl(shape));
    await page.locator(".who, #login").first().waitFor();
    return await page.locator(".who").isVisible();
  } finally {
    await browser.close();
  }
}

/** The token the session keeps: the `rt` cookie or `localStorage.rt` of the site's origin. */
function tokenOf(state: StorageState, shape: RotatingShape): string | undefined {
  if (shape === "cookie") return state.cookies.find((cookie) => cookie.name === "rt")?.value;
  return state.origins.find((origin) => origin.origin === site.origin)?.localStorage.find((entry) => entry.name === "rt")?.value;
}

/**
 * A connection logged in by `success` (its session in the profile, its evidence on the record), whose
 * health checks the test runs as the workflow's task with `engine`.
 */
async function loggedInConnection(shape: RotatingShape, engine: Pick<LoginEngine, "probe">, success: Success) {
  const org = uniqueOrg();
  const created = await core.connections.create(org, { domain: "127.0.0.1", login_url: site.loginUrl(shape), profile_name: "p", health_checks: false });
  const executionId = await loggedInUnderTestExecution(core, org, created.id, { post_login_url: success.postLoginUrl });
  const deps = { connections: core.connectionStore, timelineRetentionDays: core.config.TIMELINE_RETENTION_DAYS, secrets: secretBox(core.config) };
  const outcomes = loginOutcomes({ ...deps, sessions: profileSessions(core.config), credentials: credentials(core.config) });
  const record = (await core.connectionStore.get(org, created.id))!;
  if (!(await outcomes.succeed(record, { executionArn: executionId }, success))) throw new Error("the login's outcome was not recorded");
  const checks = healthCheckCore({ ...deps, engine, sessions: profileSessions(core.config), timing: workflowTiming(core.config) });
  const input: HealthCheckTaskInput = { org, connection_id: created.id, generation: 0, iteration: 0, execution_id: executionId, execution_started_at: new Date().toISOString() };
  const profileId = record.profile_id;
  return {
    org,
    id: created.id,
    profileId,
    check: () => checks.healthCheck(input),
    /** The session the profile holds now. */
    stored: async () => (await profileSessions(core.config).load(org, profileId))!.state,
    /** Which write of the profile's archive stands: the record's saved_at and the object's ETag. */
    archiveVersion: async () => ({
      savedAt: (await profileStore(core.config).get(org, profileId))?.archive?.saved_at,
      etag: await archives(core.config).etag(org, profileId, "tar.zst"),
    }),
  };
}

describe("a browser login of an app that rotates its session on every page load", () => {
  it.each(["cookie", "storage"] as const)("%s: saves the token the app issued at the login's last load, which opens the app once spent tokens expire", async (shape) => {
    const success = await logIn(browserEngine, shape);
    site.expireSpent();

    expect(tokenOf(success.session, shape)).toBeDefined();
    expect(await opensSignedIn(success.session, shape)).toBe(true);
  });
});

describe("health checks of a rotating session", () => {
  it.each([
    ["browser", "cookie"],
    ["browser", "storage"],
    ["http", "cookie"],
  ] as const)("%s engine, %s: three checks in a row find it logged in, each saving back the token the app renewed", async (kind, shape) => {
    const engine = kind === "browser" ? browserEngine : httpEngine;
    const connection = await loggedInConnection(shape, engine, await logIn(engine, shape));
    const tokens = [tokenOf(await connection.stored(), shape)];

    const answers = [];
    for (let check = 0; check < 3; check++) {
      site.expireSpent();
      answers.push((await connection.check()).next);
      tokens.push(tokenOf(await connection.stored(), shape));
    }
    const checks = await core.connections.timeline(connection.org, connection.id, { type: "health_check", limit: 10, offset: 0 });
    site.expireSpent();

    expect(answers).toEqual(["wait", "wait", "wait"]);
    expect(checks.items.map((event) => [event.status, event.error_code ?? null])).toEqual(Array(3).fill(["AUTHENTICATED", null]));
    expect(new Set(tokens).size).toBe(4);
    expect(await core.connections.get(connection.org, connection.id)).toMatchObject({ status: "AUTHENTICATED" });
    expect(await opensSignedIn(await connection.stored(), shape)).toBe(true);
  });

  it("leaves the profile's archive as it was when the session did not change", async () => {
    site.pauseRotation(true);
    try {
      const connection = await loggedInConnection("cookie", browserEngine, await logIn(browserEngine, "cookie"));
      const before = await connection.archiveVersion();

      const answer = await connection.check();

      expect(answer.next).toBe("wait");
      expect(before.etag).toBeDefined();
      expect(await connection.archiveVersion()).toEqual(before);
    } finally {
      site.pauseRotation(false);
    }
  });

  it("never replaces the session of a login saved while the check ran", async () => {
    const newerLogin = await logIn(httpEngine, "cookie");
    let connection: Awaited<ReturnType<typeof loggedInConnection>> | undefined;
    // The check's visit renews the session it read, while a new login saves its own.
    const racing: Pick<LoginEngine, "probe"> = {
      async probe(...args) {
        const outcome = await browserEngine.probe(...args);
        await profileSessions(core.config).save(connection!.org, { id: connection!.profileId, name: "p" }, ["127.0.0.1"], newerLogin.session);
        return outcome;
      },
    };
    connection = await loggedInConnection("cookie", racing, await logIn(browserEngine, "cookie"));
    const checkedToken = tokenOf(await connection.stored(), "cookie");

    const answer = await connection.check();
    const stored = tokenOf(await connection.stored(), "cookie");

    expect(answer.next).toBe("wait");
    expect(stored).toBe(tokenOf(newerLogin.session, "cookie"));
    expect(stored).not.toBe(checkedToken);
  });
});
