/**
 * The memory sampler of flow-memory.ts: every `sampleMs` while a flow is watched, the Chromium
 * processes under the service process (a browser Playwright launched, known by its
 * `--remote-debugging-pipe`, and all its descendants) and the service's own RSS.
 */
import { readdirSync, readFileSync } from "node:fs";
import { parentPort } from "node:worker_threads";
import type { FlowMemoryPeak, MemoryReply, MemoryRequest } from "./flow-memory.ts";

const port = parentPort;
if (!port) throw new Error("flow-memory-worker.ts runs only as a worker thread");

const sampleMs = 50;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    // The process ended between the listing and the read.
    return undefined;
  }
}

function kbField(text: string | undefined, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text ?? "")?.[1] ?? 0);
}

/** Live processes by parent pid. */
function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    if (!stat) continue;
    // Fields after the command name: state, ppid, ...
    const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state === "Z") continue;
    const siblings = children.get(Number(parent)) ?? [];
    siblings.push(Number(entry));
    children.set(Number(parent), siblings);
  }
  return children;
}

function descendants(root: number, children: Map<number, number[]>): number[] {
  const found: number[] = [];
  for (const queue = [...(children.get(root) ?? [])]; queue.length > 0; ) {
    const pid = queue.shift() as number;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

const isLaunchedBrowser = (pid: number) => {
  const args = (read(`/proc/${pid}/cmdline`) ?? "").split("\0");
  return args.includes("--remote-debugging-pipe") && !args.some((arg) => arg.startsWith("--type="));
};

let watched: { servicePid: number; peak: FlowMemoryPeak } | undefined;

function sample(): void {
  if (!watched) return;
  const { servicePid, peak } = watched;
  const children = childrenByParent();
  const browsers = descendants(servicePid, children).filter(isLaunchedBrowser);
  const chromium = browsers.flatMap((browser) => [browser, ...descendants(browser, children)]);
  let pss = 0;
  let rss = 0;
  for (const pid of chromium) {
    const rollup = read(`/proc/${pid}/smaps_rollup`);
    pss += kbField(rollup, "Pss");
    rss += kbField(rollup, "Rss");
  }
  peak.chromiumPssKb = Math.max(peak.chromiumPssKb, pss);
  peak.chromiumRssKb = Math.max(peak.chromiumRssKb, rss);
  peak.chromiumProcesses = Math.max(peak.chromiumProcesses, chromium.length);
  peak.serviceRssKbPeak = Math.max(peak.serviceRssKbPeak, kbField(read(`/proc/${servicePid}/status`), "VmRSS"));
  peak.samples++;
}

const timer = setInterval(sample, sampleMs);

port.on("message", (request: MemoryRequest) => {
  switch (request.call) {
    case "begin": {
      const rss = kbField(read(`/proc/${request.servicePid}/status`), "VmRSS");
      const peak = { chromiumPssKb: 0, chromiumRssKb: 0, chromiumProcesses: 0, serviceRssKbBefore: rss, serviceRssKbPeak: rss, samples: 0 };
      watched = { servicePid: request.servicePid, peak };
      port.postMessage({ id: request.id } satisfies MemoryReply);
      return;
    }
    case "end": {
      sample();
      port.postMessage({ id: request.id, peak: watched?.peak } satisfies MemoryReply);
      watched = undefined;
      return;
    }
    case "stop":
      clearInterval(timer);
      port.postMessage({ id: request.id } satisfies MemoryReply);
      port.close();
  }
});
