/**
 * The browser login engine on the script-built test site's `spa` shape (a single-page app that
 * draws its login form with script and keeps a bearer token in localStorage): start -> AWAITING_INPUT
 * and submit -> SUCCESS through the gateway, cold (fresh service processes) and warm, the engine
 * alone, where its time goes, and the memory a flow holds; then health checks in the browser
 * (browser-checks.ts).
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { unpackedChromium } from "#shared/browsers/local-chromium.ts";
import { submissionPollMs } from "#shared/domain/flows/step.ts";
import { createLoginEngine } from "#shared/login/http/engine.ts";
import type { FlowPrompt, LoginTarget } from "#shared/login/types.ts";
import type { LocalStack } from "../infra/local/stack.ts";
import { browserCheckBench } from "./browser-checks.ts";
import type { EngineProcessMessage, EngineProcessOptions } from "./engine-process.ts";
import { instrumentedEngine, timedAnatomy, timedEngineFlow, type EngineFlow } from "./engine-timeline.ts";
import { startFlowMemory, type FlowMemory, type FlowMemoryPeak } from "./flow-memory.ts";
import { assertLoopback, expectStatus, keepAliveClient, type KeepAliveClient } from "./http-client.ts";
import { flowEnded, promptAsResource, repeat, timedLogin, watch, type LoginTimings } from "./logins.ts";
import type { ServiceProcessOptions } from "./service-process.ts";
import type { SiteOnThread } from "./site-thread.ts";
import { percentile } from "./stats.ts";
import { renderTable } from "./table.ts";

const warmupFlows = 3;
const warmFlows = 20;
const coldProcesses = 5;
const coldEngineProcesses = 3;
const engineWarmupFlows = 2;
const engineFlows = 10;
/** Flows whose login page is settled and discovered once more by the bench, to time those parts alone. */
const anatomyFlows = 3;
const importRuns = 3;
/** Between the GETs that watch for a flow's next state: small beside a budget of seconds, and fewer reads competing with Chromium for the cores. */
const watchPauseMs = 20;
/** A person takes a moment to type; the step holding the browser is reading the record for the answer meanwhile. */
const typingPauseMs = 100;
const targets = { submitToSuccessP50Ms: 2000, coldStartToInputP50Ms: 3000 };

interface GatewayFlow {
  id: string;
  startToInputMs: number;
  loginReplyMs: number;
  submitToSuccessMs: number;
  submitReplyMs: number;
  siteMs: number;
  memory: FlowMemoryPeak;
}

/** One browser login through a gateway: create, login, time until AWAITING_INPUT, answer, time until SUCCESS. */
async function timedBrowserLogin(client: KeepAliveClient, site: SiteOnThread, profileName: string, memory: FlowMemory, servicePid: number): Promise<GatewayFlow> {
  const body = { domain: "127.0.0.1", profile_name: profileName, login_url: site.loginUrl, health_checks: false };
  const { id } = JSON.parse(expectStatus(await client.send("POST", "/auth/connections", body), 201, "create connection").body.toString("utf8")) as { id: string };
  await memory.begin(servicePid);
  const started = performance.now();
  expectStatus(await client.send("POST", `/auth/connections/${id}/login`, {}), 200, "login");
  const loginReplyMs = performance.now() - started;
  const waiting = await watch(client, id, (connection) => connection.flow_step === "AWAITING_INPUT" || flowEnded(connection), "login form", watchPauseMs);
  const startToInputMs = performance.now() - started;
  if (flowEnded(waiting)) throw new Error(`connection ${id}: the flow ended before asking for input (${waiting.flow_status} ${waiting.error_code ?? ""})`);
  if (!waiting.browser_session_id) throw new Error(`connection ${id}: the login form was found without a browser: the bench site must need one`);
  await sleep(typingPauseMs);

  const answer = await site.answer(waiting);
  await site.resetServerTime();
  const submitted = performance.now();
  expectStatus(await client.send("POST", `/auth/connections/${id}/submit`, answer), 202, "submit");
  const submitReplyMs = performance.now() - submitted;
  const ended = await watch(client, id, flowEnded, "end of the flow", watchPauseMs);
  const submitToSuccessMs = performance.now() - submitted;
  const siteMs = await site.serverTimeMs();
  const peak = await memory.end();
  if (ended.flow_status !== "SUCCESS") throw new Error(`connection ${id}: login ended ${ended.flow_status} (${ended.error_code ?? ""} ${ended.error_message ?? ""})`);
  return { id, startToInputMs, loginReplyMs, submitToSuccessMs, submitReplyMs, siteMs, memory: peak };
}

/**
 * Runs `work` against a fresh service process (bench/service-process.ts): a new Node process, a new
 * gateway, nothing of the browser engine loaded yet.
 */
async function inFreshServiceProcess<T>(options: ServiceProcessOptions, work: (client: KeepAliveClient, pid: number) => Promise<T>): Promise<T> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "service-process.ts"), JSON.stringify(options)], {
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2000)));
  const exited = once(child, "exit");
  try {
    const url = await Promise.race([
      once(child, "message").then(([message]) => (message as { url: string }).url),
      exited.then(([code]) => Promise.reject(new Error(`the service process exited (${String(code)}) before listening: ${stderr}`))),
    ]);
    assertLoopback(url);
    const client = keepAliveClient(url, { bearer: options.apiKey, maxSockets: 1 });
    try {
      return await work(client, child.pid as number);
    } finally {
      client.close();
    }
  } finally {
    if (child.connected) child.send("stop");
    const stopped = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
    if (!stopped) child.kill("SIGKILL");
  }
}

/** One engine-alone flow in a fresh process (engine-process.ts), answered from here. */
async function coldEngineFlow(options: EngineProcessOptions, answerOf: (prompt: FlowPrompt) => Promise<object>): Promise<EngineFlow> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "engine-process.ts"), JSON.stringify(options)], { stdio: ["ignore", "ignore", "pipe", "ipc"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2000)));
  const exited = once(child, "exit");
  try {
    return await new Promise<EngineFlow>((resolve, reject) => {
      child.on("message", (message: EngineProcessMessage) => {
        if ("flow" in message) resolve(message.flow);
        else void answerOf(message.prompt).then((answer) => child.send(answer), reject);
      });
      void exited.then(([code]) => reject(new Error(`the engine process exited (${String(code)}) without a flow: ${stderr}`)));
    });
  } finally {
    const stopped = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
    if (!stopped) child.kill("SIGKILL");
  }
}

async function importMs(): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, "browser-engine-import.ts")]);
  return Number(stdout);
}

export interface BrowserBenchInput {
  stack: LocalStack;
  /** The login site on its thread, for the HTTP login that warms a fresh service process's non-browser code. */
  loginSite: SiteOnThread;
  scriptSite: SiteOnThread;
  /** The HTTP engine's gateway logins on the plain form, printed beside the browser's. */
  httpLogins: readonly LoginTimings[];
}

export async function browserLoginBench({ stack, loginSite, scriptSite, httpLogins }: BrowserBenchInput): Promise<{ report: string; failed: boolean }> {
  assertLoopback(scriptSite.url);
  const loadBefore = loadavg()[0] ?? Number.NaN;
  const sectionStarted = performance.now();
  const memory = await startFlowMemory();
  const dataDir = await mkdtemp(join(tmpdir(), "acs-bench-browser-"));
  try {
    const runId = Date.now().toString(36);
    let processes = 0;
    /** One fresh service process: an HTTP login first, then the timed browser flow. */
    const coldFlow = () =>
      inFreshServiceProcess(
        { dataDir, dynamoEndpoint: stack.dynamoEndpoint, s3Endpoint: stack.s3Endpoint, apiKey: stack.apiKey, tableName: `bench-browser-${runId}-${++processes}` },
        async (client, pid) => {
          await timedLogin(client, loginSite, `bench-http-${runId}-${processes}`);
          return timedBrowserLogin(client, scriptSite, `bench-browser-${runId}-${processes}`, memory, pid);
        },
      );
    process.stderr.write("logins: browser, a fresh service process with nothing unpacked (truly cold)...\n");
    const trulyCold = await coldFlow();
    const cold = await repeat("browser cold flows (a fresh service process each)", coldProcesses, coldFlow);
    const imports = await repeat("browser engine imports (a fresh process each)", importRuns, importMs);

    const client = keepAliveClient(stack.url, { bearer: stack.apiKey, maxSockets: 1 });
    const warmLogin = (index: number) => timedBrowserLogin(client, scriptSite, `bench-browser-${runId}-warm-${index}`, memory, process.pid);
    let warm: GatewayFlow[];
    let checks: Awaited<ReturnType<typeof browserCheckBench>>;
    try {
      await repeat("browser warm-up flows", warmupFlows, (index) => warmLogin(warmFlows + index));
      warm = await repeat("browser warm flows", warmFlows, warmLogin);
      checks = await browserCheckBench(client, warm.map((flow) => flow.id), runId);
    } finally {
      client.close();
    }

    const target: LoginTarget = { domain: "127.0.0.1", loginUrl: scriptSite.loginUrl, allowedDomains: [], engine: "browser" };
    const http = createLoginEngine({ allowPrivateTargets: true });
    const httpAttempts = await repeat("HTTP engine attempts on the spa", engineFlows, async () => {
      const started = performance.now();
      const outcome = await http.start(target);
      if (outcome.kind !== "failure" || !outcome.browserMayHelp) throw new Error(`the HTTP engine on the spa: expected a failure the browser may help with, got ${outcome.kind}`);
      return performance.now() - started;
    });
    const executablePath = await unpackedChromium(join(dataDir, "chromium"));
    const answerOf = (prompt: FlowPrompt) => scriptSite.answer(promptAsResource(prompt));
    const engineCold = await repeat("browser engine cold flows (a fresh process each)", coldEngineProcesses, () =>
      coldEngineFlow({ executablePath, loginUrl: scriptSite.loginUrl }, answerOf),
    );
    const instrumented = instrumentedEngine(executablePath);
    await repeat("browser engine warm-up flows", engineWarmupFlows, () => timedEngineFlow(instrumented, answerOf, target));
    const engine = await repeat("browser engine flows", engineFlows, () => timedEngineFlow(instrumented, answerOf, target));
    const anatomy = await repeat("browser engine anatomy flows", anatomyFlows, () => timedAnatomy(instrumented, target));

    const sectionSeconds = (performance.now() - sectionStarted) / 1000;
    const report = browserReport({ trulyCold, cold, warm, engine, engineCold, anatomy, imports, httpAttempts, httpLogins, loadBefore, sectionSeconds });
    return { report: `${report}\n${checks.report}`, failed: checks.failed };
  } finally {
    await memory.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const ms = (value: number) => value.toFixed(0);
const mib = (kb: number) => (kb / 1024).toFixed(0);
const ascending = (values: readonly number[]) => Float64Array.from(values).sort();
const p50 = (values: readonly number[]) => percentile(ascending(values), 50);
const p95 = (values: readonly number[]) => percentile(ascending(values), 95);
const max = (values: readonly number[]) => Math.max(...values);

interface BrowserFigures {
  trulyCold: GatewayFlow;
  cold: GatewayFlow[];
  warm: GatewayFlow[];
  engine: EngineFlow[];
  engineCold: EngineFlow[];
  anatomy: { discoveryMs: number; quietSettleMs: number }[];
  imports: number[];
  httpAttempts: number[];
  httpLogins: readonly LoginTimings[];
  loadBefore: number;
  sectionSeconds: number;
}

function latencyRow(measure: string, values: readonly number[], p50TargetMs?: number): string[] {
  const median = p50(values);
  const target = p50TargetMs === undefined ? ["", ""] : [`< ${p50TargetMs}`, median < p50TargetMs ? "yes" : "NO"];
  return [measure, String(values.length), ms(median), values.length > 1 ? ms(p95(values)) : "", ...target];
}

function memoryRow(label: string, flows: readonly GatewayFlow[]): string[] {
  const pss = flows.map((flow) => flow.memory.chromiumPssKb);
  const rss = flows.map((flow) => flow.memory.chromiumRssKb);
  const growth = flows.map((flow) => flow.memory.serviceRssKbPeak - flow.memory.serviceRssKbBefore);
  const processes = flows.map((flow) => flow.memory.chromiumProcesses);
  const samples = flows.map((flow) => flow.memory.samples);
  return [
    label,
    String(flows.length),
    `${mib(p50(pss))} / ${mib(max(pss))}`,
    `${mib(p50(rss))} / ${mib(max(rss))}`,
    String(max(processes)),
    `${mib(p50(growth))} / ${mib(max(growth))}`,
    String(Math.min(...samples)),
  ];
}

function browserReport(figures: BrowserFigures): string {
  const { trulyCold, cold, warm, engine, engineCold, anatomy, imports, httpAttempts, httpLogins } = figures;
  const startToInput = (flows: readonly GatewayFlow[]) => flows.map((flow) => flow.startToInputMs);
  const submitToSuccess = (flows: readonly GatewayFlow[]) => flows.map((flow) => flow.submitToSuccessMs);
  const latencyHeader = ["measure (ms)", "n", "p50", "p95", "target (p50)", "met"];
  const latencyRows = [
    latencyRow("browser, start -> AWAITING_INPUT, truly cold (Chromium unpacked too)", startToInput([trulyCold])),
    latencyRow("browser, start -> AWAITING_INPUT, cold", startToInput(cold), targets.coldStartToInputP50Ms),
    latencyRow("browser, start -> AWAITING_INPUT, warm", startToInput(warm)),
    latencyRow("browser, submit -> SUCCESS, truly cold", submitToSuccess([trulyCold])),
    latencyRow("browser, submit -> SUCCESS, cold", submitToSuccess(cold), targets.submitToSuccessP50Ms),
    latencyRow("browser, submit -> SUCCESS, warm", submitToSuccess(warm), targets.submitToSuccessP50Ms),
    latencyRow("  submit route's 202 reply (warm)", warm.map((flow) => flow.submitReplyMs)),
    latencyRow("  the site's own handler time in it (warm)", warm.map((flow) => flow.siteMs)),
    latencyRow("browser engine alone, start", engine.map((flow) => flow.startMs)),
    latencyRow("browser engine alone, submit", engine.map((flow) => flow.submitMs)),
    latencyRow("browser engine alone, start, cold (a fresh process)", engineCold.map((flow) => flow.startMs)),
    latencyRow("browser engine alone, submit, cold", engineCold.map((flow) => flow.submitMs)),
    latencyRow("HTTP engine (plain form), start -> AWAITING_INPUT", httpLogins.map((timing) => timing.startToInputMs)),
    latencyRow("HTTP engine (plain form), submit -> SUCCESS", httpLogins.map((timing) => timing.submitToSuccessMs)),
  ];

  /** Each part's p50 and p95 over the warm engine flows, and its p50 over the cold ones. */
  const partRows = (label: string, phase: "start" | "submit") => {
    const part = (flows: readonly EngineFlow[], name: string) => flows.map((flow) => (flow[phase] as Record<string, number>)[name] as number);
    const names = Object.keys(engine[0]?.[phase] ?? {});
    return [[label, "", "", ""], ...names.map((name) => [`  ${name}`, ms(p50(part(engine, name))), ms(p95(part(engine, name))), ms(p50(part(engineCold, name)))])];
  };
  const engineStartP50 = p50(engine.map((flow) => flow.startMs));
  const engineSubmitP50 = p50(engine.map((flow) => flow.submitMs));
  const breakdownRows = [
    ...partRows(`engine alone, start (p50 ${ms(engineStartP50)})`, "start"),
    ["  of which discovery alone, timed again on the settled login page", ms(p50(anatomy.map((each) => each.discoveryMs))), ms(max(anatomy.map((each) => each.discoveryMs)))],
    ["  of which a settle of a page already quiet (its floor)", ms(p50(anatomy.map((each) => each.quietSettleMs))), ms(max(anatomy.map((each) => each.quietSettleMs)))],
    ...partRows(`engine alone, submit (p50 ${ms(engineSubmitP50)})`, "submit"),
    ["gateway, warm, around the engine", "", ""],
    ["  the HTTP engine's attempt first (login_form_not_found), alone", ms(p50(httpAttempts)), ms(p95(httpAttempts))],
    ["  start -> AWAITING_INPUT p50 minus the engine's start p50", ms(p50(startToInput(warm)) - engineStartP50), ""],
    ["  submit -> SUCCESS p50 minus the engine's submit p50", ms(p50(submitToSuccess(warm)) - engineSubmitP50), ""],
    [`  of which the record poll's wait (every ${submissionPollMs} ms: ${submissionPollMs / 2} on average)`, String(submissionPollMs / 2), String(submissionPollMs)],
    ["cold, on top of warm", "", ""],
    ["  start -> AWAITING_INPUT: cold p50 minus warm p50", ms(p50(startToInput(cold)) - p50(startToInput(warm))), ""],
    ["  submit -> SUCCESS: cold p50 minus warm p50", ms(p50(submitToSuccess(cold)) - p50(submitToSuccess(warm))), ""],
    ["  of which importing the engine and playwright-core (a fresh process)", ms(p50(imports)), ms(max(imports))],
    ["  truly cold minus cold p50 (Chromium's unpacking)", ms(trulyCold.startToInputMs - p50(startToInput(cold))), ""],
  ];

  const memoryHeader = ["flows", "n", "Chromium tree PSS p50 / max MiB", "Chromium tree RSS p50 / max MiB", "processes", "service RSS growth p50 / max MiB", "min samples"];
  const memoryRows = [memoryRow("warm (service = this bench process)", warm), memoryRow("cold (service = the fresh process)", cold), memoryRow("truly cold", [trulyCold])];

  const coldMet = p50(startToInput(cold)) < targets.coldStartToInputP50Ms;
  const submitMet = p50(submitToSuccess(warm)) < targets.submitToSuccessP50Ms && p50(submitToSuccess(cold)) < targets.submitToSuccessP50Ms;
  return [
    "",
    `Browser logins (the script-built test site's \`spa\` shape, on a thread of its own): ${warmFlows} warm flows after ${warmupFlows} warm-up ones, ` +
      `${coldProcesses} cold ones and 1 truly cold, each in a fresh service process; the engine alone over ${engineFlows} flows after ${engineWarmupFlows}`,
    `1-minute load average before the browser section: ${figures.loadBefore.toFixed(2)}; the section took ${figures.sectionSeconds.toFixed(0)} s`,
    "",
    renderTable(latencyHeader, latencyRows),
    `cold flows one by one (ms): start -> AWAITING_INPUT ${cold.map((flow) => ms(flow.startToInputMs)).join(", ")}; ` +
      `submit -> SUCCESS ${cold.map((flow) => ms(flow.submitToSuccessMs)).join(", ")} (p95 of ${coldProcesses} is their highest)`,
    "",
    `Where the time goes (ms; cold p50: the engine alone in ${coldEngineProcesses} fresh processes, its first flow each)`,
    renderTable(["part", "p50", "p95 / max", "cold p50"], breakdownRows),
    "",
    "Peak memory of one flow (sampled every 50 ms from /proc while it ran)",
    renderTable(memoryHeader, memoryRows),
    "",
    `targets: start -> AWAITING_INPUT p50 under ${targets.coldStartToInputP50Ms} ms cold (${coldMet ? "met" : "MISSED"}); ` +
      `submit -> SUCCESS p50 under ${targets.submitToSuccessP50Ms} ms cold and warm (${submitMet ? "met" : "MISSED"})`,
    "notes:",
    "- every flow launches its own Chromium and closes it before SUCCESS; no Chromium outlives its flow, so 'warm' and 'cold'",
    "  are about the service process, not the browser:",
    "  warm: a later browser flow in a service process that has run browser flows before (this bench's own stack, after",
    `  ${warmupFlows} warm-up flows): playwright-core and the engine loaded, Chromium's files in the OS page cache.`,
    "  cold: the first browser flow of a fresh service process (bench/service-process.ts: a new Node process running the local",
    "  stack on the same DynamoDB Local and s3rver, a table of its own) that has served one HTTP-engine login first, so its",
    "  routes, workflow runner and HTTP engine are loaded and the cold part is what the browser brings: importing",
    "  playwright-core and the engine, the policy proxy, the first Chromium launch. Chromium was unpacked by an earlier",
    "  process, and its files stay in the OS page cache (no cache is dropped).",
    "  truly cold: the same with an empty unpack directory: @sparticuz/chromium's unpacking is in the flow.",
    "- each gateway flow: a new connection (no login engine remembered), so the HTTP engine tries first, finds no form, and",
    "  the browser engine starts (docs/login-engines.md). start: from just before POST /login until a GET shows",
    `  AWAITING_INPUT; submit: from just before POST /submit until a GET shows SUCCESS; the bench GETs ${watchPauseMs} ms apart and`,
    `  submits ${typingPauseMs} ms after AWAITING_INPUT shows. The LoginStep invocation holding the browser reads the record`,
    `  every ${submissionPollMs} ms for the submission.`,
    "- engine alone: createBrowserLoginEngine with a policy proxy and Chromium per flow, as the service composes it; its parts",
    "  from timestamps the bench takes around the engine's calls to its browser (launch, close, the flow context's requests",
    "  and loads, the storage-state capture, the second context evidence learning opens), nothing timed inside the service.",
    "  'settle + discovery' waits for the network quiet 250 ms and the DOM quiet 150 ms (shared/login/browser/settle.ts).",
    "  Cold engine alone: bench/engine-process.ts, a fresh Node process with the engine's modules imported before the flow",
    "  and playwright-core at its first launch (in the launch part), as the service's first browser flow imports it.",
    "- memory: the flow's Chromium (the browser Playwright launched under the service process and all its descendants), PSS",
    "  and RSS from smaps_rollup summed at each sample, the highest sum of the flow; RSS counts pages shared between",
    "  Chromium's processes once per process, PSS shares them out. Service RSS growth: the service process's VmRSS at its",
    "  highest during the flow minus at its start (warm: this bench process, which also hosts the test sites' threads and",
    "  s3rver; cold: the fresh process, its first load of playwright-core included).",
  ].join("\n");
}
