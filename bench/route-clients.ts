import { Worker } from "node:worker_threads";
import type { LoadResult } from "./load.ts";

export type RouteScenario = "create" | "get" | "list";

export interface ConnectionsFixture {
  profileNames: string[];
  connectionIds: string[];
}

export interface RouteLoad {
  url: string;
  apiKey: string;
  scenario: RouteScenario;
  fixture: ConnectionsFixture;
  concurrency: number;
  listLimit: number;
  warmupMs: number;
  durationMs: number;
}

/**
 * Each worker keeps to one profile, so no two creates in flight ADD to the same profile's
 * connection_count: a transaction conflict (retried inside the route, an error for the raw floor
 * call) would measure contention between the bench's own clients rather than the route.
 */
export function profileOfWorker(fixture: ConnectionsFixture, worker: number): string {
  return fixture.profileNames[worker % fixture.profileNames.length] as string;
}

/**
 * Runs a route's clients on a thread of their own: its warm-up, then its measured run. A user's
 * clients are other machines; in this process they would take the gateway's thread for their own
 * requests and replies.
 */
export async function loadRouteOnThread(load: RouteLoad): Promise<{ warmup: LoadResult; measured: LoadResult }> {
  const worker = new Worker(new URL("./route-clients-worker.ts", import.meta.url), { workerData: load });
  try {
    return await new Promise((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
      worker.once("exit", (code) => reject(new Error(`the ${load.scenario} clients' thread exited with ${code} before reporting`)));
    });
  } finally {
    await worker.terminate();
  }
}
