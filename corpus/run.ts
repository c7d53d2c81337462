/**
 * `npm run corpus [-- app ...]`: every app of the corpus by default. Installs each app on first use
 * (under corpus/.apps/), serves it on 127.0.0.1, starts the service's local stack, and drives the
 * service with the official client over the app's whole cycle; prints a table of app x phase, each
 * failure with its reason. Progress goes to stderr; exits non-zero when any phase failed.
 */
import Kernel from "@onkernel/sdk";
import type { ManagedAuthTimelineEvent } from "@onkernel/sdk/resources/auth/connections";
import type { Browser } from "playwright-core";
import { join } from "node:path";
import { unpackedChromium } from "#shared/browsers/local-chromium.ts";
import { launchLoginBrowser } from "#shared/login/browser/chromium.ts";
import { totpCode } from "#shared/secrets/totp.ts";
import { renderTable } from "../bench/table.ts";
import { startLocalStack, type LocalStack } from "../infra/local/stack.ts";
import { downloadedSession, driveLogin, type Connection } from "../test/support/login-flows.ts";
import { actual } from "./apps/actual.ts";
import { appsDir, type CorpusApp, type RunningApp } from "./apps/app.ts";
import { ghost } from "./apps/ghost.ts";
import { n8n } from "./apps/n8n.ts";
import { syncthing } from "./apps/syncthing.ts";
import { thelounge } from "./apps/thelounge.ts";
import { ttRss } from "./apps/tt-rss.ts";

const apps: Record<string, () => CorpusApp> = { syncthing, thelounge, "tt-rss": ttRss, actual, ghost, n8n };

const phases = ["ground truth", "login", "profile", "wrong password", "logout noticed", "re-auth", "alive"] as const;
type Phase = (typeof phases)[number];
type Outcome = { passed: boolean; note: string };

/**
 * The workflow's clock runs this many times faster than real time, so that a health-check interval
 * of 300 s (the API's least) passes in 30 s. A login step's own waits stay in real time.
 */
const timeScale = Number(process.env.CORPUS_TIME_SCALE ?? 0.1);
const checkInterval = 300;
const checkIntervalMs = checkInterval * timeScale * 1000;
/**
 * Apps whose cycles run at once: a cycle mostly waits for the workflow's checks, so several share the
 * stack and the machine; each has its own profiles and credential.
 */
const concurrency = Math.max(1, Number(process.env.CORPUS_CONCURRENCY ?? 3));
/** Health checks to see pass after the re-auth, none of them re-authenticating. */
const aliveChecks = 3;

class PhaseFailed extends Error {}
/** Ends a wrong-password flow early: the site's message is what that phase waits for. */
class MessageShown extends Error {}
const fail = (why: string): never => {
  throw new PhaseFailed(why);
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in apps));
if (unknown.length) {
  process.stderr.write(`unknown app(s): ${unknown.join(", ")}; known: ${Object.keys(apps).join(", ")}\n`);
  process.exit(2);
}
const chosen = requested.length ? requested : Object.keys(apps);
const progress = (line: string) => process.stderr.write(`${line}\n`);

let stack: LocalStack | undefined;
let browser: Browser | undefined;
const running: CorpusApp[] = [];
let stopping: Promise<void> | undefined;
const stopAll = () =>
  (stopping ??= (async () => {
    for (const app of running) await app.stop().catch(() => {});
    await browser?.close().catch(() => {});
    await stack?.stop();
  })());
// Without this an interrupted run would leave the apps, DynamoDB Local's JVM and browsers behind.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    progress(`${signal}: stopping the apps and the local stack...`);
    void stopAll().finally(() => process.exit(130));
  });
}

const results = new Map<string, Map<Phase, Outcome>>();
try {
  const instances = chosen.map((name) => (apps[name] as () => CorpusApp)());
  for (const app of instances) {
    const started = Date.now();
    progress(`== ${app.name}: installing (if not yet) ==`);
    await app.install();
    progress(`${app.name}: installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  // The service's login browser and the runner's own checks run the same Chromium, unpacked once.
  process.env.BROWSER_EXECUTABLE ??= await unpackedChromium(join(appsDir, "chromium"));
  browser = await launchLoginBrowser({ executablePath: process.env.BROWSER_EXECUTABLE });
  progress("starting the local stack...");
  stack = await startLocalStack({ port: 0, workflow: { timeScale } });
  const client = new Kernel({ baseURL: stack.url, apiKey: stack.apiKey });
  const waiting = [...instances];
  const runNext = async () => {
    for (let app = waiting.shift(); app; app = waiting.shift()) {
      running.push(app);
      progress(`== ${app.name}: starting ==`);
      try {
        const site = await app.start({ browser: browser! });
        results.set(app.name, await cycle(client, app, site));
      } catch (error) {
        const note = `the app could not be started: ${error instanceof Error ? error.message : String(error)}`;
        results.set(app.name, new Map([["ground truth", { passed: false, note }]]));
      } finally {
        await app.stop();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, waiting.length) }, runNext));
} catch (error) {
  progress(`corpus run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
} finally {
  await stopAll();
}
process.stdout.write(report(new Map(chosen.filter((name) => results.has(name)).map((name) => [name, results.get(name)!]))));
if ([...results.values()].some((outcomes) => [...outcomes.values()].some((outcome) => !outcome.passed))) process.exitCode = 1;

/** One app's full cycle; a phase that cannot run because an earlier one failed is left out of the map. */
async function cycle(client: Kernel, app: CorpusApp, site: RunningApp): Promise<Map<Phase, Outcome>> {
  const outcomes = new Map<Phase, Outcome>();
  const phase = async (name: Phase, body: () => Promise<string>): Promise<boolean> => {
    progress(`${app.name}: ${name}...`);
    try {
      outcomes.set(name, { passed: true, note: await body() });
    } catch (error) {
      const note = error instanceof PhaseFailed ? error.message : `runner error: ${error instanceof Error ? error.message : String(error)}`;
      outcomes.set(name, { passed: false, note });
    }
    progress(`${app.name}: ${name}: ${outcomes.get(name)?.passed ? "pass" : "FAIL"}: ${outcomes.get(name)?.note}`);
    return outcomes.get(name)?.passed ?? false;
  };
  const answer = (password: string) => {
    let step = 0;
    return (connection: Connection) => {
      step += 1;
      const field_values: Record<string, string> = {};
      for (const field of connection.fields ?? []) {
        if (field.type === "identifier") field_values[field.id] = site.username;
        else if (field.type === "password") field_values[field.id] = password;
        // The person reads the code off their authenticator app: the current code of the app's secret.
        else if ((field.type === "totp_code" || field.type === "code") && site.totpSecret) field_values[field.id] = totpCode(site.totpSecret);
        else fail(`step ${step} of the flow asked for a ${field.type} field "${field.label}", which this app's login does not ask`);
      }
      if (Object.keys(field_values).length === 0) fail(`step ${step} of the flow asked for no field (choices: ${JSON.stringify(connection.choices ?? [])})`);
      return { field_values };
    };
  };
  /** A site that says nothing of a wrong password: the step comes back with no message made up, and the third attempt ends the flow. */
  const askedAgainUnsaid = async (id: string, answerWrong: ReturnType<typeof answer>): Promise<string> => {
    const states = await driveLogin(client, id, answerWrong);
    const said = states.find((state) => state.website_error);
    if (said) fail(`website_error "${said.website_error}", though the site says nothing of its own`);
    const ended = states.at(-1) as Connection;
    if (ended.flow_status !== "FAILED" || ended.error_code !== "credentials_invalid") fail(`the flow ${describeEnd(ended)}`);
    return `the step asked ${states.length - 1} times with no message made up, then ${describeEnd(ended)}`;
  };
  const profileSignedIn = async () => app.signedIn(await downloadedSession(client, app.name));

  const groundTruth = await phase("ground truth", async () => {
    const session = await app.signIn();
    if (!(await app.signedIn(session))) fail("the runner's own login gave a session the app does not take");
    if (await app.signedIn(app.forge(session))) fail("a forged session was taken as signed in: the check cannot tell");
    return "own login signed in, forged session refused";
  });
  if (!groundTruth) return outcomes;

  const credential = `${app.name}-user`;
  await client.credentials.create({
    name: credential,
    domain: "127.0.0.1",
    values: { identifier: site.username, password: site.password },
    ...(site.totpSecret ? { totp_secret: site.totpSecret } : {}),
  });
  const connection = await client.auth.connections.create({
    domain: "127.0.0.1",
    profile_name: app.name,
    login_url: site.loginUrl,
    credential: { name: credential },
    health_checks: true,
    health_check_interval: checkInterval,
  });

  // Deleted whichever phase ends the cycle: its checks would otherwise go on against a stopped app.
  try {
    const loggedIn = await phase("login", async () => {
      const ended = (await driveLogin(client, connection.id, answer(site.password))).at(-1) as Connection;
      if (ended.flow_status !== "SUCCESS") fail(describeEnd(ended));
      // The service's own field, which the official client's type does not name.
      const evidence = (ended as Connection & { session_evidence?: string | null }).session_evidence;
      return `SUCCESS, can_reauth ${ended.can_reauth}, session_evidence ${evidence ?? "null"}`;
    });
    if (loggedIn) {
      await phase("profile", async () => {
        if (!(await profileSignedIn())) fail("the saved profile, opened afresh, is not signed in");
        return "the saved profile opens the app signed in";
      });
    }

    await phase("wrong password", async () => {
      const wrong = await client.auth.connections.create({ domain: "127.0.0.1", profile_name: `${app.name}-wrong`, login_url: site.loginUrl, health_checks: false, save_credentials: false });
      const answerWrong = answer(`${site.password}-wrong`);
      try {
        if (site.wrongPassword === null) return await askedAgainUnsaid(wrong.id, answerWrong);
        const expected = site.wrongPassword;
        const shown = await driveLogin(client, wrong.id, (state) => {
          if (state.website_error) throw new MessageShown(state.website_error);
          return answerWrong(state);
        }).then(
          (states) => states.at(-1)?.website_error ?? fail(`no website_error; the flow ${describeEnd(states.at(-1) as Connection)}`),
          (error: unknown) => {
            if (!(error instanceof MessageShown)) throw error;
            return error.message;
          },
        );
        if (!expected.test(shown)) fail(`website_error "${shown}", not the site's message (${expected})`);
        return `website_error "${shown}"`;
      } finally {
        await client.auth.connections.delete(wrong.id);
      }
    });
    if (!loggedIn) return outcomes;

    const seenBeforeLogout = new Set((await timeline(client, connection.id)).map((event) => event.id));
    await app.logoutEverywhere();
    const noticed = await phase("logout noticed", async () => {
      const events = await newEvents(client, connection.id, seenBeforeLogout, (events) => events.some(isLoggedOutCheck), 6);
      if (!events.some(isLoggedOutCheck)) fail(`no health check found the session ended; the checks after it: ${describeChecks(events)}`);
      return describeChecks(events.slice(0, events.findIndex(isLoggedOutCheck) + 1));
    });
    if (!noticed) return outcomes;

    const reauthed = await phase("re-auth", async () => {
      const events = await newEvents(client, connection.id, seenBeforeLogout, (events) => events.some((event) => event.type === "reauth" && event.status !== "IN_PROGRESS"), 4);
      const reauth = events.find((event) => event.type === "reauth" && event.status !== "IN_PROGRESS");
      if (!reauth) fail(`no re-auth followed (connection: ${describeConnection(await client.auth.connections.retrieve(connection.id))})`);
      if (reauth?.status !== "SUCCESS") fail(`re-auth ${reauth?.status} ${reauth?.error_code ?? ""}: ${reauth?.error_message ?? ""}`);
      const now = await client.auth.connections.retrieve(connection.id);
      if (now.status !== "AUTHENTICATED") fail(`after the re-auth the connection is ${describeConnection(now)}`);
      if (!(await profileSignedIn())) fail("re-auth SUCCESS, but the saved profile is not signed in");
      return "re-auth SUCCESS, AUTHENTICATED, profile signed in";
    });
    if (!reauthed) return outcomes;

    await phase("alive", async () => {
      const seen = new Set((await timeline(client, connection.id)).map((event) => event.id));
      const isCheck = (event: ManagedAuthTimelineEvent) => event.type === "health_check";
      const events = await newEvents(client, connection.id, seen, (events) => events.filter(isCheck).length >= aliveChecks || events.some((event) => !isAliveCheck(event)), aliveChecks + 3);
      const broken = events.find((event) => !isAliveCheck(event));
      if (broken) fail(`${describeChecks([broken])}${broken.error_message ? `: ${broken.error_message}` : ""}, after ${events.slice(0, events.indexOf(broken)).filter(isCheck).length} good checks`);
      if (events.filter(isCheck).length < aliveChecks) fail(`only ${events.filter(isCheck).length} health checks ran: ${describeChecks(events)}`);
      if (!(await profileSignedIn())) fail(`${aliveChecks} checks said AUTHENTICATED, but the saved profile is not signed in`);
      return `${events.filter(isCheck).length} checks AUTHENTICATED, no re-auth, profile signed in`;
    });
    return outcomes;
  } finally {
    await client.auth.connections.delete(connection.id);
  }
}

function isLoggedOutCheck(event: ManagedAuthTimelineEvent): boolean {
  return event.type === "health_check" && event.status === "NEEDS_AUTH";
}

/** A check that says signed in and can tell: `session_unverifiable` says the page cannot. */
function isAliveCheck(event: ManagedAuthTimelineEvent): boolean {
  return event.type === "health_check" && event.status === "AUTHENTICATED" && !event.error_code;
}

async function timeline(client: Kernel, id: string): Promise<ManagedAuthTimelineEvent[]> {
  return (await client.auth.connections.timeline(id, { limit: 100 })).getPaginatedItems();
}

/**
 * The connection's events not in `seen`, oldest first, once `enough` says so or after `intervals`
 * health-check intervals (with a minute's slack for a browser check on a busy machine).
 */
async function newEvents(client: Kernel, id: string, seen: Set<string>, enough: (events: ManagedAuthTimelineEvent[]) => boolean, intervals: number) {
  const deadline = Date.now() + intervals * checkIntervalMs + 60_000;
  for (;;) {
    const events = (await timeline(client, id)).filter((event) => !seen.has(event.id)).reverse();
    if (enough(events) || Date.now() > deadline) return events;
    await new Promise((resume) => setTimeout(resume, 1000));
  }
}

function describeEnd(state: Connection): string {
  const error = [state.error_code, state.error_message].filter(Boolean).join(": ");
  return `ended ${state.flow_status}${error ? ` ${error}` : ""}${state.website_error ? ` (website_error "${state.website_error}")` : ""}`;
}

function describeConnection(connection: Connection): string {
  return `${connection.status}, can_reauth ${connection.can_reauth}${connection.can_reauth_reason ? ` (${connection.can_reauth_reason})` : ""}`;
}

function describeChecks(events: ManagedAuthTimelineEvent[]): string {
  if (events.length === 0) return "none";
  return events.map((event) => `${event.type} ${event.status}${event.error_code ? ` ${event.error_code}` : ""}`).join(", ");
}

function report(results: Map<string, Map<Phase, Outcome>>): string {
  const rows = [...results].map(([name, outcomes]) => [name, ...phases.map((phase) => (outcomes.has(phase) ? (outcomes.get(phase)?.passed ? "pass" : "FAIL") : "-"))]);
  const reasons = [...results].flatMap(([name, outcomes]) => [...outcomes].filter(([, outcome]) => !outcome.passed).map(([phase, outcome]) => `${name} / ${phase}: ${outcome.note}`));
  return `\n${renderTable(["app", ...phases], rows)}\n${reasons.length ? `\n${reasons.join("\n")}\n` : ""}(- : not run, an earlier phase failed)\n`;
}
