/**
 * Browser pools on the local stack, with real Chromium: warm acquire latency, the flush of 50 idle
 * browsers, the memory an idle browser holds (its whole process tree, from /proc), and the memory
 * and CPU of one browser kept busy by a page, which size the browser task in AWS.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium } from "playwright-core";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { keepAliveClient, type KeepAliveClient } from "./http-client.ts";
import { summarize } from "./stats.ts";
import { renderTable } from "./table.ts";

const warmCycles = 300;
const flushPoolSize = 50;
const targets = { acquireP50Ms: 20, flushMs: 2000 };

interface Pool {
  id: string;
  available_count: number;
}

function json<T>(reply: { status: number; body: Buffer }, expected: number, what: string): T {
  if (reply.status !== expected) throw new Error(`${what}: expected ${expected}, got ${reply.status} ${reply.body.toString()}`);
  return (reply.body.length ? JSON.parse(reply.body.toString()) : undefined) as T;
}

async function filledPool(client: KeepAliveClient, size: number): Promise<Pool> {
  const created = json<Pool>(await client.send("POST", "/browser_pools", { size, fill_rate_per_minute: 100_000 }), 201, "create pool");
  const deadline = Date.now() + 180_000;
  for (;;) {
    const pool = json<Pool>(await client.send("GET", `/browser_pools/${created.id}`), 200, "get pool");
    if (pool.available_count === size) return pool;
    if (Date.now() > deadline) throw new Error(`pool of ${size} did not fill in 180 s (${pool.available_count} idle)`);
    await sleep(100);
  }
}

interface GroupUsage {
  rssKb: number;
  pssKb: number;
  /** User and system CPU time of the group's live processes, in seconds. */
  cpuSeconds: number;
}

const clockTicksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** Memory and CPU time summed over every process in the process group `group`. */
function groupUsage(group: number): GroupUsage {
  const usage = { rssKb: 0, pssKb: 0, cpuSeconds: 0 };
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name: state, ppid, pgrp, ..., utime and stime the 12th and 13th.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== group) continue;
      const rollup = readFileSync(`/proc/${entry}/smaps_rollup`, "utf8");
      usage.rssKb += Number(/^Rss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
      usage.pssKb += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
      usage.cpuSeconds += (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
    } catch {
      // The process ended while it was read.
    }
  }
  return usage;
}

/**
 * A page that keeps a browser busy the way a script-heavy application does: a few thousand
 * elements restyled and a canvas redrawn on every frame, and a retained heap that grows.
 */
const busyPage = `<!doctype html><title>busy</title><canvas width="800" height="600"></canvas><main></main><script>
const main = document.querySelector("main");
for (let index = 0; index < 3000; index++) main.appendChild(document.createElement("div")).textContent = "item " + index;
const items = [...main.children];
const context = document.querySelector("canvas").getContext("2d");
const retained = [];
function frame(time) {
  items.forEach((item, index) => { item.style.transform = "translateX(" + ((time / 10 + index) % 200) + "px)"; item.textContent = "item " + index + " " + Math.round(time); });
  for (let shape = 0; shape < 500; shape++) { context.fillStyle = "hsl(" + ((time + shape) % 360) + ",50%,50%)"; context.fillRect((shape * 37 + time) % 800, (shape * 53) % 600, 20, 20); }
  if (retained.length < 200) retained.push(new Array(50000).fill(time));
  requestAnimationFrame(frame);
}
requestAnimationFrame(frame);
</script>`;

const busySeconds = 20;

/** Leases one browser of `pool`, keeps it busy with `busyPage` for a while, and samples its process group. */
async function busyBrowser(client: KeepAliveClient, pool: Pool): Promise<{ peakPssKb: number; peakRssKb: number; cores: number }> {
  const site = createServer((_request, response) => response.writeHead(200, { "content-type": "text/html" }).end(busyPage));
  await new Promise<void>((listening) => site.listen(0, "127.0.0.1", listening));
  const lease = json<{ session_id: string; cdp_ws_url: string }>(await client.send("POST", `/browser_pools/${pool.id}/acquire`, {}), 200, "acquire");
  const browser = await chromium.connectOverCDP(lease.cdp_ws_url);
  try {
    const page = await browser.contexts()[0]!.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    // Each browser's directory is named after its session.
    const leased = browserGroups().get(lease.session_id);
    if (leased === undefined) throw new Error(`the leased browser ${lease.session_id} has no recorded process`);
    const start = groupUsage(leased);
    const startedAt = performance.now();
    let peakPssKb = start.pssKb;
    let peakRssKb = start.rssKb;
    while (performance.now() - startedAt < busySeconds * 1000) {
      await sleep(500);
      const sample = groupUsage(leased);
      peakPssKb = Math.max(peakPssKb, sample.pssKb);
      peakRssKb = Math.max(peakRssKb, sample.rssKb);
    }
    const cores = (groupUsage(leased).cpuSeconds - start.cpuSeconds) / ((performance.now() - startedAt) / 1000);
    return { peakPssKb, peakRssKb, cores };
  } finally {
    await browser.close();
    json(await client.send("POST", `/browser_pools/${pool.id}/release`, { session_id: lease.session_id, reuse: false }), 204, "release busy");
    site.close();
  }
}

/** The local provider starts each browser as the leader of its own process group, pid recorded beside its profile. */
function browserGroups(): Map<string, number> {
  const root = process.env.BROWSER_DATA_DIR;
  if (!root) throw new Error("BROWSER_DATA_DIR is not set: run against startLocalStack in this process");
  return new Map(
    readdirSync(root).flatMap((session) => {
      try {
        return [[session, (JSON.parse(readFileSync(join(root, session, "browser.json"), "utf8")) as { pid: number }).pid] as const];
      } catch {
        return [];
      }
    }),
  );
}

const ms = (value: number) => value.toFixed(1);
const mb = (kb: number) => (kb / 1024).toFixed(0);

export async function poolBench(stack: { url: string; apiKey: string }): Promise<string> {
  const client = keepAliveClient(stack.url, { bearer: stack.apiKey, maxSockets: 1 });
  try {
    process.stderr.write("pools: filling a warm pool of 5...\n");
    const warm = await filledPool(client, 5);
    const acquires: number[] = [];
    const releases: number[] = [];
    const started = performance.now();
    for (let cycle = 0; cycle < warmCycles; cycle++) {
      const before = performance.now();
      const session = json<{ session_id: string }>(
        await client.send("POST", `/browser_pools/${warm.id}/acquire`, { acquire_timeout_seconds: 0 }),
        200,
        "acquire",
      );
      const acquired = performance.now();
      json(await client.send("POST", `/browser_pools/${warm.id}/release`, { session_id: session.session_id }), 204, "release");
      acquires.push(acquired - before);
      releases.push(performance.now() - acquired);
    }
    const elapsed = performance.now() - started;
    process.stderr.write(`pools: keeping one browser busy for ${busySeconds} s...\n`);
    const busy = await busyBrowser(client, warm);
    json(await client.send("DELETE", `/browser_pools/${warm.id}`, { force: true }), 204, "delete warm pool");

    process.stderr.write(`pools: filling a pool of ${flushPoolSize}...\n`);
    const fillStarted = performance.now();
    const big = await filledPool(client, flushPoolSize);
    const fillMs = performance.now() - fillStarted;
    const groups = [...browserGroups().values()];
    const usages = groups.map(groupUsage);
    const rssKb = usages.reduce((sum, usage) => sum + usage.rssKb, 0) / groups.length;
    const pssKb = usages.reduce((sum, usage) => sum + usage.pssKb, 0) / groups.length;

    const flushStarted = performance.now();
    json(await client.send("POST", `/browser_pools/${big.id}/flush`), 204, "flush");
    const flushMs = performance.now() - flushStarted;
    json(await client.send("DELETE", `/browser_pools/${big.id}`, { force: true }), 204, "delete flushed pool");

    const acquire = summarize(acquires, elapsed);
    const release = summarize(releases, elapsed);
    const rows = [
      ["warm acquire p50 (ms)", ms(acquire.p50Ms), `< ${targets.acquireP50Ms}`],
      ["warm acquire p99 (ms)", ms(acquire.p99Ms), ""],
      ["release (reuse) p50 / p99 (ms)", `${ms(release.p50Ms)} / ${ms(release.p99Ms)}`, ""],
      [`flush of ${flushPoolSize} idle browsers (ms)`, ms(flushMs), `< ${targets.flushMs}`],
      [`fill of ${flushPoolSize} browsers from empty (s)`, (fillMs / 1000).toFixed(1), ""],
      [`idle browser PSS, mean of ${groups.length} (MB)`, mb(pssKb), ""],
      [`idle browser RSS, mean of ${groups.length} (MB)`, mb(rssKb), ""],
      [`busy browser peak PSS / RSS over ${busySeconds} s (MB)`, `${mb(busy.peakPssKb)} / ${mb(busy.peakRssKb)}`, "< 2048 (the AWS task's memory)"],
      [`busy browser CPU over ${busySeconds} s (cores)`, busy.cores.toFixed(2), ""],
    ];
    const verdict = [
      `warm acquire p50 ${acquire.p50Ms < targets.acquireP50Ms ? "meets" : "MISSES"} its target`,
      `flush of ${flushPoolSize} ${flushMs < targets.flushMs ? "meets" : "MISSES"} its target`,
    ].join("; ");
    return [
      `Browser pools (local Chromium, ${warmCycles} acquire+release cycles on a warm pool of 5, one client connection)`,
      renderTable(["measure", "value", "target"], rows),
      `RSS counts shared pages once per process of a browser's tree; PSS shares them out, so it is what a browser adds. ${verdict}.`,
      "",
    ].join("\n");
  } finally {
    client.close();
  }
}
