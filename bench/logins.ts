/**
 * Login flows on the local stack against the test website, which runs on a thread of its own: the time
 * from a submit on the plain form to SUCCESS, and health checks per second, each next to what the
 * login engine alone takes for the same step; then the browser engine's logins (browser-logins.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { StorageState } from "#shared/archive/storage-state.ts";
import { healthChecks } from "#shared/composition/health-checks.ts";
import { profileSessions } from "#shared/composition/profile-sessions.ts";
import { secretBox } from "#shared/composition/secrets.ts";
import { connectionStore } from "#shared/composition/table.ts";
import type { Connection } from "#shared/domain/connection.ts";
import type { HealthCheckTaskInput } from "#shared/domain/health-checks.ts";
import { loginTarget } from "#shared/domain/flows/step.ts";
import { openEvidence } from "#shared/domain/sealed-evidence.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { SessionEvidence } from "#shared/login/types.ts";
import type { FlowPrompt, LoginEngine, LoginTarget } from "#shared/login/types.ts";
import { localOrg, type LocalStack } from "../infra/local/stack.ts";
import type { Connection as ConnectionResource } from "../test/support/login-flows.ts";
import { browserLoginBench } from "./browser-logins.ts";
import { assertLoopback, expectStatus, keepAliveClient, type KeepAliveClient } from "./http-client.ts";
import { failureLines, roundRobin, runLoad, type LoadResult } from "./load.ts";
import { summarize, type LatencySummary } from "./stats.ts";
import { startSiteOnThread, type SiteOnThread } from "./site-thread.ts";
import { renderTable } from "./table.ts";

const measuredLogins = 50;
/** Not counted: they let V8 compile the flow's path and DynamoDB Local's JVM warm up. */
const warmupLogins = 5;
/**
 * A person takes seconds to type, so by the time a submit comes the waiting step has registered
 * its task token; without this pause the submit would race that registration and time it too.
 */
const typingPauseMs = 100;
/**
 * Between the GETs that watch for SUCCESS: the end is seen within one GET plus this. The events
 * stream would cost the flow less but reads the table every SSE_POLL_MILLISECONDS (50 ms at the
 * least), which adds up to 50 ms to a figure whose whole budget is 100.
 */
const watchPauseMs = 2;
const flowWaitMs = 30_000;
const checkConcurrency = 8;
const checkedConnections = measuredLogins;
const checkSeconds = 10;
const checkWarmupSeconds = 1;
const targets = { submitToSuccessP50Ms: 100, checksPerCpuSecond: 300 };
/** Linux reports a process's CPU time in /proc in USER_HZ ticks, 100 a second on every architecture Node runs on. */
const ticksPerSecond = 100;

export interface LoginTimings {
  /** From just before POST /login until a GET shows AWAITING_INPUT. */
  startToInputMs: number;
  submitToSuccessMs: number;
  siteMs: number;
  submitReplyMs: number;
  /** Each GET that watched for the end: how late the end can be seen. */
  watchReadMs: number[];
}

type EngineTimings = Pick<LoginTimings, "submitToSuccessMs" | "siteMs">;

interface ThroughputFigures {
  label: string;
  run: LoadResult;
  summary: LatencySummary;
  processCpuSeconds: number;
  mainThreadCpuSeconds: number;
  databaseCpuSeconds: number;
  siteMs: number;
}



export async function connectionResource(client: KeepAliveClient, id: string): Promise<ConnectionResource> {
  const reply = expectStatus(await client.send("GET", `/auth/connections/${encodeURIComponent(id)}`), 200, "get connection");
  return JSON.parse(reply.body.toString("utf8")) as ConnectionResource;
}

/** GETs the connection until `settled` holds, pausing `pauseMs` between reads; each read's time goes to `readMs`. */
export async function watch(
  client: KeepAliveClient,
  id: string,
  settled: (connection: ConnectionResource) => boolean,
  what: string,
  pauseMs: number,
  readMs: number[] = [],
): Promise<ConnectionResource> {
  const deadline = performance.now() + flowWaitMs;
  for (;;) {
    const readStarted = performance.now();
    const connection = await connectionResource(client, id);
    readMs.push(performance.now() - readStarted);
    if (settled(connection)) return connection;
    if (performance.now() > deadline) throw new Error(`connection ${id}: no ${what} within ${flowWaitMs / 1000} s (flow_step ${connection.flow_step})`);
    await sleep(pauseMs);
  }
}

export const flowEnded = (connection: ConnectionResource) => connection.flow_status !== "IN_PROGRESS";

/** One login through the gateway: create, login, wait for the form, then time submit -> SUCCESS. */
export async function timedLogin(client: KeepAliveClient, site: SiteOnThread, profileName: string): Promise<LoginTimings & { id: string }> {
  const body = { domain: "127.0.0.1", profile_name: profileName, login_url: site.loginUrl, health_checks: false };
  const { id } = JSON.parse(expectStatus(await client.send("POST", "/auth/connections", body), 201, "create connection").body.toString("utf8")) as { id: string };
  const loginStarted = performance.now();
  expectStatus(await client.send("POST", `/auth/connections/${id}/login`, {}), 200, "login");
  const waiting = await watch(client, id, (connection) => connection.flow_step === "AWAITING_INPUT" || flowEnded(connection), "login form", 10);
  const startToInputMs = performance.now() - loginStarted;
  if (flowEnded(waiting)) throw new Error(`connection ${id}: the flow ended before asking for input (${waiting.flow_status} ${waiting.error_code ?? ""})`);
  await sleep(typingPauseMs);

  const answer = await site.answer(waiting);
  await site.resetServerTime();
  const started = performance.now();
  expectStatus(await client.send("POST", `/auth/connections/${id}/submit`, answer), 202, "submit");
  const submitReplyMs = performance.now() - started;
  const watchReadMs: number[] = [];
  const ended = await watch(client, id, flowEnded, "end of the flow", watchPauseMs, watchReadMs);
  const submitToSuccessMs = performance.now() - started;
  const siteMs = await site.serverTimeMs();
  if (ended.flow_status !== "SUCCESS") throw new Error(`connection ${id}: login ended ${ended.flow_status} (${ended.error_code ?? ""} ${ended.error_message ?? ""})`);
  return { id, startToInputMs, submitToSuccessMs, siteMs, submitReplyMs, watchReadMs };
}

/** The step's prompt in the shape the person answering it reads: the resource's fields and choices. */
export function promptAsResource(prompt: FlowPrompt): ConnectionResource {
  return { fields: prompt.fields, choices: prompt.choices } as unknown as ConnectionResource;
}

/** The engine's own submit of the plain form, from a fresh start, with nothing around it. */
async function timedEngineSubmit(engine: LoginEngine, site: SiteOnThread, target: LoginTarget): Promise<EngineTimings> {
  const form = await engine.start(target);
  if (form.kind !== "input") throw new Error(`engine start: expected the login form, got ${form.kind}`);
  const answer = await site.answer(promptAsResource(form.prompt));
  await site.resetServerTime();
  const started = performance.now();
  const outcome = await engine.submit(target, form.state, answer);
  const submitToSuccessMs = performance.now() - started;
  const siteMs = await site.serverTimeMs();
  if (outcome.kind !== "success") throw new Error(`engine submit: expected success, got ${outcome.kind}`);
  return { submitToSuccessMs, siteMs };
}

export async function repeat<T>(label: string, count: number, once: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let index = 0; index < count; index++) {
    results.push(await once(index));
    if ((index + 1) % 10 === 0 || index + 1 === count) process.stderr.write(`logins: ${label} ${index + 1}/${count}\n`);
  }
  return results;
}

/**
 * CPU seconds DynamoDB Local's JVM has used so far: the one this process started, a few generations
 * down (it runs in a network namespace of its own behind a relay, on a port of that namespace).
 */
export function databaseCpuReader(): () => number {
  const pid = readdirSync("/proc").find((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      return cmdline.some((arg) => arg.endsWith("DynamoDBLocal.jar")) && descendsFromThisProcess(entry);
    } catch {
      return false;
    }
  });
  if (!pid) throw new Error("no DynamoDB Local started by this process");
  return () => {
    // Fields after the command name: state, ppid, ..., utime (12th), stime (13th).
    const fields = statFields(pid);
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  };
}

function statFields(pid: string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * CPU seconds of this process's main thread: the JavaScript of the service (and of this loop),
 * without the test site's and s3rver's threads, libuv's pool and V8's helper threads.
 */
export function mainThreadCpuSeconds(): number {
  const fields = statFields(`self/task/${process.pid}`);
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/**
 * CPU seconds of this process's children that have ended and been waited for, with the children they
 * waited for in turn (cutime and cstime): a Chromium the service launched and closed, with its
 * renderer and utility processes, which it reaps before it exits.
 */
export function endedChildrenCpuSeconds(): number {
  const fields = statFields("self");
  return (Number(fields[13]) + Number(fields[14])) / ticksPerSecond;
}

function descendsFromThisProcess(pid: string): boolean {
  for (let current = Number(statFields(pid)[1]); current > 1; current = Number(statFields(String(current))[1])) {
    if (current === process.pid) return true;
  }
  return false;
}

async function measureThroughput(
  label: string,
  site: SiteOnThread,
  databaseCpuSeconds: () => number,
  operation: (worker: number) => Promise<void>,
): Promise<ThroughputFigures> {
  process.stderr.write(`logins: measuring ${label} (${checkWarmupSeconds} s warm-up, ${checkSeconds} s measured)...\n`);
  const warmup = await runLoad({ concurrency: checkConcurrency, durationMs: checkWarmupSeconds * 1000 }, operation);
  if (warmup.failures) throw new Error(`${label} warm-up: ${warmup.failures} failed: ${[...warmup.failureMessages.keys()].join("; ")}`);
  await site.resetServerTime();
  const databaseBefore = databaseCpuSeconds();
  const cpuBefore = process.cpuUsage();
  const mainThreadBefore = mainThreadCpuSeconds();
  const run = await runLoad({ concurrency: checkConcurrency, durationMs: checkSeconds * 1000 }, operation);
  const cpu = process.cpuUsage(cpuBefore);
  const mainThread = mainThreadCpuSeconds() - mainThreadBefore;
  return {
    label,
    run,
    summary: summarize(run.latenciesMs, run.elapsedMs),
    processCpuSeconds: (cpu.user + cpu.system) / 1e6,
    mainThreadCpuSeconds: mainThread,
    databaseCpuSeconds: databaseCpuSeconds() - databaseBefore,
    siteMs: await site.serverTimeMs(),
  };
}

/** The logged-in connections as the workflow's HealthCheck task reads them, their saved sessions and the evidence their checks look for. */
export async function checkableConnections(
  client: KeepAliveClient,
  ids: readonly string[],
): Promise<{ connection: Connection; session: StorageState; evidence: SessionEvidence }[]> {
  const store = connectionStore();
  return Promise.all(
    ids.map(async (id) => {
      expectStatus(await client.send("PATCH", `/auth/connections/${id}`, { health_checks: true }), 200, "turn health checks on");
      const connection = await store.get(localOrg, id);
      const session = connection && (await profileSessions().load(localOrg, connection.profile_id))?.state;
      if (!connection?.post_login_url || !session) throw new Error(`connection ${id} has no saved session after its login`);
      const evidence = await openEvidence(secretBox(), connection);
      if (evidence?.basis !== "verified") throw new Error(`connection ${id}: its login learnt no evidence of a signed-in page`);
      return { connection, session, evidence };
    }),
  );
}

/** The HealthCheck task's input for a check of `connection` by the execution that runs its loop. */
export function checkTaskInput(connection: Connection, executionStartedAt: string): HealthCheckTaskInput {
  return {
    org: connection.org,
    connection_id: connection.id,
    generation: connection.workflow_generation,
    iteration: 0,
    execution_id: connection.execution_arn ?? "",
    execution_started_at: executionStartedAt,
  };
}

const ms = (value: number) => value.toFixed(1);

export function percentilesRow(measure: string, values: readonly number[], p50TargetMs?: number): string[] {
  const summary = summarize(values, 0);
  const target = p50TargetMs === undefined ? ["", ""] : [`< ${p50TargetMs}`, summary.p50Ms < p50TargetMs ? "yes" : "NO"];
  return [measure, ms(summary.p50Ms), ms(summary.p90Ms), ms(summary.p99Ms), ...target];
}

function throughputRow(figures: ThroughputFigures, withTarget: boolean): string[] {
  const { summary, processCpuSeconds, mainThreadCpuSeconds, databaseCpuSeconds, siteMs } = figures;
  const perMainThreadCpuSecond = summary.count / mainThreadCpuSeconds;
  return [
    figures.label,
    String(summary.count),
    summary.perSecond.toFixed(0),
    ms(summary.p50Ms),
    processCpuSeconds.toFixed(2),
    (summary.count / processCpuSeconds).toFixed(0),
    mainThreadCpuSeconds.toFixed(2),
    perMainThreadCpuSecond.toFixed(0),
    (siteMs / summary.count).toFixed(2),
    databaseCpuSeconds.toFixed(2),
    (summary.count / (processCpuSeconds + databaseCpuSeconds)).toFixed(0),
    withTarget ? `>= ${targets.checksPerCpuSecond}` : "",
    withTarget ? (perMainThreadCpuSecond >= targets.checksPerCpuSecond ? "yes" : "NO") : "",
  ];
}

function report(
  gateway: LoginTimings[],
  engine: EngineTimings[],
  throughput: ThroughputFigures[],
  loadBeforeRun: number,
): string {
  const excludingSite = (timings: readonly EngineTimings[]) => timings.map((timing) => timing.submitToSuccessMs - timing.siteMs);
  const latencyHeader = ["measure (ms)", "p50", "p90", "p99", "target (p50)", "met"];
  const latencyRows = [
    percentilesRow("submit -> SUCCESS, raw", gateway.map((timing) => timing.submitToSuccessMs)),
    percentilesRow("  the site's own handler time in it", gateway.map((timing) => timing.siteMs)),
    percentilesRow("  excluding the site", excludingSite(gateway), targets.submitToSuccessP50Ms),
    percentilesRow("  submit route's 202 reply", gateway.map((timing) => timing.submitReplyMs)),
    percentilesRow("  one GET watching for the end (its lag)", gateway.flatMap((timing) => timing.watchReadMs)),
    percentilesRow("engine submit alone, raw", engine.map((timing) => timing.submitToSuccessMs)),
    percentilesRow("  the site's own handler time in it", engine.map((timing) => timing.siteMs)),
    percentilesRow("  excluding the site", excludingSite(engine)),
  ];
  const throughputHeader = [
    "measure",
    "calls",
    "wall /s",
    "p50 ms",
    "process CPU-s",
    "per process CPU-s",
    "main-thread CPU-s",
    "per main-thread CPU-s",
    "site ms/call",
    "JVM CPU-s",
    "per CPU-s incl. JVM",
    "target",
    "met",
  ];
  const lines = [
    "",
    `Login flows (local stack, test site on a thread of its own): submit -> SUCCESS on the plain form over ${measuredLogins} logins ` +
      `after ${warmupLogins} warm-up ones, and health checks at concurrency ${checkConcurrency}`,
    `machine: ${cpus().length} CPUs, node ${process.version}; 1-minute load average before the run: ${loadBeforeRun.toFixed(2)}`,
    "",
    renderTable(latencyHeader, latencyRows),
    "",
    renderTable(throughputHeader, throughput.map((figures, index) => throughputRow(figures, index === 0))),
    "",
    `targets: submit -> SUCCESS p50 excluding the site under ${targets.submitToSuccessP50Ms} ms; ` +
      `at least ${targets.checksPerCpuSecond} health checks per CPU-second of the main thread (the one-core reading: the service's code runs there)`,
    "notes:",
    `- submit -> SUCCESS: from just before POST /submit until a GET through the gateway shows flow_status SUCCESS; the bench`,
    `  GETs back to back (${watchPauseMs} ms apart) rather than following the events stream, whose table reads every`,
    "  SSE_POLL_MILLISECONDS (at least 50 ms) would add up to half of the budget. The submit comes",
    `  ${typingPauseMs} ms after AWAITING_INPUT shows, as a person's would: the waiting step has its task token by then.`,
    "  In between: the submit route (seal, conditional write, SendTaskSuccess), the local Step Functions runner",
    "  resuming, LoginStep (open the sealed state, the engine's submit, archive the session to s3rver, write SUCCESS).",
    "- the site's time is what its handlers spent (test/sites: serverTimeMs) in that window; one login at a time.",
    "- engine submit alone: createLoginEngine's submit of the same form, straight after its start, no table or archive.",
    `- health check: the workflow's HealthCheck task core (healthChecks().healthCheck) on ${checkedConnections} AUTHENTICATED`,
    "  connections of the logins above (health_checks turned on), round-robin: read the connection, load the profile's",
    "  session from its archive, open the login's sealed session evidence, probe post_login_url for it, write",
    "  status + timeline event (one TransactWriteItems).",
    "  probe: the engine's probe() alone (sessions loaded beforehand). session load: the archive's GET from s3rver and",
    "  its decoding. The rest of a check is the connection's GetItem and the write.",
    "- process CPU-s: process.cpuUsage() over the measured window: the service code, the gateway and Step Functions",
    "  runner (idle here), the test site's thread, s3rver's thread (serving every archive GET, a stand-in for S3) and",
    "  the driving loop. main-thread CPU-s: /proc/self/task/<pid>/stat, the thread running the service's JavaScript",
    "  (with this loop), without the site's and s3rver's threads: a real site and S3 are other machines. DynamoDB Local",
    "  is a separate JVM: its CPU-s (from /proc) are shown apart and in the last figure, with the process's.",
    "  The wall rate is bounded by the machine's 2 cores, shared by all of these.",
  ];
  lines.push(...failureLines(throughput.map(({ label, run }) => ({ label, result: run }))));
  return `${lines.join("\n")}\n`;
}

/** The figures as a printable report, and whether any call failed. */
export async function loginBench(stack: LocalStack): Promise<{ report: string; failed: boolean }> {
  const loadBeforeRun = loadavg()[0] ?? Number.NaN;
  assertLoopback(stack.url);
  const site = await startSiteOnThread();
  const client = keepAliveClient(stack.url, { bearer: stack.apiKey, maxSockets: 1 });
  try {
    assertLoopback(site.url);
    const runId = Date.now().toString(36);
    const login = (index: number) => timedLogin(client, site, `bench-login-${runId}-${index}`);
    await repeat("warm-up logins", warmupLogins, (index) => login(measuredLogins + index));
    const gateway = await repeat("logins", measuredLogins, login);

    const engine = createLoginEngine({ allowPrivateTargets: true });
    const target: LoginTarget = { domain: "127.0.0.1", loginUrl: site.loginUrl, allowedDomains: [] };
    await repeat("warm-up engine submits", warmupLogins, () => timedEngineSubmit(engine, site, target));
    const engineSubmits = await repeat("engine submits", measuredLogins, () => timedEngineSubmit(engine, site, target));

    const checkable = await checkableConnections(client, gateway.map((timing) => timing.id));
    const nextCheckable = roundRobin(checkable);
    const checks = healthChecks();
    const executionStartedAt = new Date().toISOString();
    const databaseCpuSeconds = databaseCpuReader();
    const healthCheck = await measureThroughput("health check (task core)", site, databaseCpuSeconds, async () => {
      const { connection } = nextCheckable();
      const next = await checks.healthCheck(checkTaskInput(connection, executionStartedAt));
      if (next.next !== "wait") throw new Error(`health check of ${connection.id}: the loop would go '${next.next}', not wait`);
    });
    const loggedOut = (await Promise.all(checkable.map(({ connection }) => connectionStore().get(localOrg, connection.id)))).filter(
      (checked) => checked?.status !== "AUTHENTICATED" || !checked.last_auth_check_at,
    );
    if (loggedOut.length) throw new Error(`${loggedOut.length} connections were not found logged in by their health checks`);
    const probe = await measureThroughput("engine probe() alone", site, databaseCpuSeconds, async () => {
      const { connection, session, evidence } = nextCheckable();
      const outcome = await engine.probe(loginTarget(connection), session, connection.post_login_url ?? "", evidence);
      if (outcome.state !== "logged_in") throw new Error(`probe of ${connection.id}: ${outcome.state}`);
    });
    const sessionLoad = await measureThroughput("session load alone", site, databaseCpuSeconds, async () => {
      const { connection } = nextCheckable();
      if (!(await profileSessions().load(localOrg, connection.profile_id))) throw new Error(`profile of ${connection.id}: no saved session`);
    });

    const throughput = [healthCheck, probe, sessionLoad];
    const httpReport = report(gateway, engineSubmits, throughput, loadBeforeRun);
    const scriptSite = await startSiteOnThread("script");
    try {
      const browser = await browserLoginBench({ stack, loginSite: site, scriptSite, httpLogins: gateway });
      return { report: `${httpReport}${browser.report}\n`, failed: browser.failed || throughput.some((figures) => figures.run.failures > 0) };
    } finally {
      await scriptSite.stop();
    }
  } finally {
    client.close();
    await site.stop();
  }
}
