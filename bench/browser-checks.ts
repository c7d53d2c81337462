/**
 * Browser health checks: the workflow's HealthCheck task core (healthChecks().healthCheck) on
 * connections the browser engine logged in through the gateway, one check at a time, each timed on
 * the wall clock and in CPU (this process's, its main thread's, the check's Chromium's, DynamoDB
 * Local's). Two sites: the script-built `spa`, whose session a load leaves as it was, and the
 * rotating-session site's `storage` shape, whose token every load swaps, so each check saves the
 * renewed session back into the profile.
 */
import { healthChecks } from "#shared/composition/health-checks.ts";
import { connectionStore, profileStore } from "#shared/composition/table.ts";
import { checkEngine } from "#shared/domain/check-engine.ts";
import type { Connection } from "#shared/domain/connection.ts";
import { localOrg } from "../infra/local/stack.ts";
import type { KeepAliveClient } from "./http-client.ts";
import { checkableConnections, checkTaskInput, databaseCpuReader, endedChildrenCpuSeconds, mainThreadCpuSeconds, percentilesRow, repeat, timedLogin } from "./logins.ts";
import { startSiteOnThread } from "./site-thread.ts";
import { renderTable } from "./table.ts";

/** Not counted: the first checks of each group load the check's code paths and, on the rotating site, the save-back's. */
const warmupChecks = 2;
const measuredChecks = 20;
const rotatingLogins = 5;
const targets = { checkP50Ms: 1500 };

interface CheckCost {
  wallMs: number;
  processCpuMs: number;
  mainThreadCpuMs: number;
  chromiumCpuMs: number;
  databaseCpuMs: number;
  savedBack: boolean;
}

interface CheckGroup {
  label: string;
  /** Whether its checks are the ones the target is for: those that save a renewed session back. */
  savesBack: boolean;
  costs: CheckCost[];
}

type GroupOutcome = CheckGroup | { label: string; error: string };

/** `measuredChecks` checks round-robin over the connections `ids`, after `warmupChecks`; each must find its session in the browser. */
async function timedChecks(label: string, savesBack: boolean, client: KeepAliveClient, ids: readonly string[]): Promise<CheckGroup> {
  const checkable = await checkableConnections(client, ids);
  for (const { connection, evidence } of checkable) {
    const engine = checkEngine(connection, evidence);
    if (engine !== "browser") throw new Error(`connection ${connection.id}: its checks would ask the ${engine} engine, not the browser`);
  }
  const checks = healthChecks();
  const databaseCpuSeconds = databaseCpuReader();
  const executionStartedAt = new Date().toISOString();
  const savedAt = async (connection: Connection) => (await profileStore().get(localOrg, connection.profile_id))?.archive?.saved_at;

  const check = async (index: number): Promise<CheckCost> => {
    const { connection } = checkable[index % checkable.length] as (typeof checkable)[number];
    const savedBefore = await savedAt(connection);
    const cpuBefore = process.cpuUsage();
    const mainThreadBefore = mainThreadCpuSeconds();
    const chromiumBefore = endedChildrenCpuSeconds();
    const databaseBefore = databaseCpuSeconds();
    const started = performance.now();
    const next = await checks.healthCheck(checkTaskInput(connection, executionStartedAt));
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const cost = {
      wallMs,
      processCpuMs: (cpu.user + cpu.system) / 1000,
      mainThreadCpuMs: (mainThreadCpuSeconds() - mainThreadBefore) * 1000,
      chromiumCpuMs: (endedChildrenCpuSeconds() - chromiumBefore) * 1000,
      databaseCpuMs: (databaseCpuSeconds() - databaseBefore) * 1000,
    };
    const checked = await connectionStore().get(localOrg, connection.id);
    if (next.next !== "wait" || checked?.status !== "AUTHENTICATED" || (checked.inconclusive_checks ?? 0) > 0) {
      throw new Error(`health check of ${connection.id}: the loop would go '${next.next}', the connection is ${checked?.status ?? "gone"} (${checked?.inconclusive_checks ?? 0} checks in a row could not tell)`);
    }
    return { ...cost, savedBack: (await savedAt(connection)) !== savedBefore };
  };
  await repeat(`${label}: warm-up browser checks`, warmupChecks, check);
  const costs = await repeat(`${label}: browser checks`, measuredChecks, (index) => check(warmupChecks + index));
  return { label, savesBack, costs };
}

async function measured(label: string, measure: (label: string) => Promise<CheckGroup>): Promise<GroupOutcome> {
  try {
    return await measure(label);
  } catch (error) {
    return { label, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Browser checks of the spa's connections `spaIds` (logged in by the browser section's warm flows),
 * then of `rotatingLogins` connections logged in here on the rotating-session site. A group whose
 * logins or checks fail is reported with its error, and the result says a call failed.
 */
export async function browserCheckBench(client: KeepAliveClient, spaIds: readonly string[], runId: string): Promise<{ report: string; failed: boolean }> {
  const spa = await measured("spa: a load leaves the session as it was", (label) => timedChecks(label, false, client, spaIds));
  const rotating = await measured("rotating storage: a new token at every load", async (label) => {
    const site = await startSiteOnThread("rotating");
    try {
      const logins = await repeat("rotating-session site logins", rotatingLogins, (index) => timedLogin(client, site, `bench-rotating-${runId}-${index}`));
      return await timedChecks(label, true, client, logins.map((login) => login.id));
    } finally {
      await site.stop();
    }
  });
  const groups = [spa, rotating];
  return { report: checksReport(groups), failed: groups.some((group) => "error" in group) };
}

function groupRows(group: CheckGroup): string[][] {
  const of = (part: keyof Omit<CheckCost, "savedBack">) => group.costs.map((cost) => cost[part]);
  const withChromium = group.costs.map((cost) => cost.processCpuMs + cost.chromiumCpuMs);
  const saved = group.costs.filter((cost) => cost.savedBack).length;
  return [
    [group.label],
    [`  saved back after ${saved} of ${group.costs.length} checks${group.savesBack ? "" : " (no save-back needed)"}`],
    percentilesRow("  wall time", of("wallMs"), group.savesBack ? targets.checkP50Ms : undefined),
    percentilesRow("  CPU: this process", of("processCpuMs")),
    percentilesRow("    of which its main thread", of("mainThreadCpuMs")),
    percentilesRow("  CPU: the check's Chromium", of("chromiumCpuMs")),
    percentilesRow("  CPU: this process + Chromium", withChromium),
    percentilesRow("  CPU: DynamoDB Local's JVM", of("databaseCpuMs")),
  ];
}

function checksReport(groups: readonly GroupOutcome[]): string {
  const rows = groups.flatMap((group) => ("error" in group ? [[`${group.label}: FAILED: ${group.error}`]] : groupRows(group)));
  return [
    "",
    `Browser health checks (the HealthCheck task core on connections the browser logged in), one at a time: ${measuredChecks} per site after ${warmupChecks} warm-up ones`,
    renderTable(["per check (ms)", "p50", "p90", "p99", "target (p50)", "met"], rows),
    `target: a browser health check with its save-back (the rotating site's) under ${targets.checkP50Ms} ms p50, warm`,
    "notes:",
    "- each check: read the connection, load the profile's session from its archive, open the sealed evidence (learnt by the",
    "  browser engine, so the check asks the browser: shared/domain/check-engine.ts), launch Chromium with the network",
    "  policy proxy, open post_login_url with the saved state, judge the settled page, capture the state and close Chromium;",
    "  then save a renewed session back (fingerprint, conditional writes of the profile's record and archive) and write",
    "  the status and the timeline event. 'saved back': checks after which the profile's archive.saved_at had moved.",
    `- spa: the ${measuredChecks} checks go round the browser section's warm logins (a bearer token in localStorage that a`,
    "  load leaves as it was). rotating storage: test/sites/rotating-session-site.ts on a thread of its own, its `storage`",
    `  shape (localStorage.rt swapped by the page's script at every load), ${rotatingLogins} connections logged in through the`,
    "  gateway (the HTTP engine's submit keeps no session there, so the browser engine logs in).",
    "- CPU per check, from /proc in 10 ms ticks (process.cpuUsage() for this process): this process holds the service",
    "  (main thread), the test sites' threads and s3rver; Chromium's is what its processes used, counted when they ended",
    "  (cutime/cstime of this process, to which the closed browser and the processes it reaped are added).",
  ].join("\n");
}
