/**
 * Browser pools on the local stack, with real Chromium: warm acquire latency, the flush of 50 idle
 * browsers, and the memory an idle browser holds (its whole process tree, from /proc).
 */
import { readdirSync, readFileSync } from "node:fs";
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

/** Kilobytes of `field` (Rss, Pss) summed over every process in the process group `group`. */
function groupMemoryKb(group: number, field: "Rss" | "Pss"): number {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name: state, ppid, pgrp, ...
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp !== group) continue;
      const rollup = readFileSync(`/proc/${entry}/smaps_rollup`, "utf8");
      total += Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(rollup)?.[1] ?? 0);
    } catch {
      // The process ended while it was read.
    }
  }
  return total;
}

/** The local provider starts each browser as the leader of its own process group, pid recorded beside its profile. */
function browserGroups(): number[] {
  const root = process.env.BROWSER_DATA_DIR;
  if (!root) throw new Error("BROWSER_DATA_DIR is not set: run against startLocalStack in this process");
  return readdirSync(root).flatMap((session) => {
    try {
      return [(JSON.parse(readFileSync(join(root, session, "browser.json"), "utf8")) as { pid: number }).pid];
    } catch {
      return [];
    }
  });
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
    json(await client.send("DELETE", `/browser_pools/${warm.id}`), 204, "delete warm pool");

    process.stderr.write(`pools: filling a pool of ${flushPoolSize}...\n`);
    const fillStarted = performance.now();
    const big = await filledPool(client, flushPoolSize);
    const fillMs = performance.now() - fillStarted;
    const groups = browserGroups();
    const rssKb = groups.reduce((sum, group) => sum + groupMemoryKb(group, "Rss"), 0) / groups.length;
    const pssKb = groups.reduce((sum, group) => sum + groupMemoryKb(group, "Pss"), 0) / groups.length;

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
