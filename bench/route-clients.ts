import { Worker } from "node:worker_threads";
import type { LoadResult } from "./load.ts";

export type RouteScenario = "create" | "get" | "list";

export interface ConnectionsFixture {
  profileNames: string[];
  connectionIds: string[];
}

export interface RouteClientsSetup {
  url: string;
  apiKey: string;
  scenario: RouteScenario;
  fixture: ConnectionsFixture;
  concurrency: number;
  listLimit: number;
}

/**
 * Each worker keeps to one profile, so no two creates in flight ADD to the same profile's
 * connection_count: a transaction conflict (retried inside the route, an error for the raw floor
 * call) would measure contention between the bench's own clients rather than the route.
 */
export function profileOfWorker(fixture: ConnectionsFixture, worker: number): string {
  return fixture.profileNames[worker % fixture.profileNames.length] as string;
}

let domainSequence = 0;

/**
 * A domain no other request of this run uses, so no create ever meets an existing guard. Each
 * thread counts on its own, so each passes a source of its own.
 */
export function uniqueDomain(source: string): string {
  return `${source}${domainSequence++}.bench.example`;
}

export interface RouteClients {
  /** One load run of `durationMs` from all the clients. */
  run(durationMs: number): Promise<LoadResult>;
  stop(): Promise<void>;
}

/**
 * A route's clients on a thread of their own, kept between runs. A user's clients are other
 * machines; in this process they would take the gateway's thread for their own requests and replies.
 */
export function startRouteClients(setup: RouteClientsSetup): RouteClients {
  const worker = new Worker(new URL("./route-clients-worker.ts", import.meta.url), { workerData: setup });
  // Settled by whichever comes first: an error, or an exit (stop's included) without one.
  const ended = new Promise<never>((_, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the ${setup.scenario} clients' thread exited with ${code}`)));
  });
  ended.catch(() => undefined);
  return {
    run(durationMs) {
      const answered = new Promise<LoadResult>((resolve) => worker.once("message", resolve));
      worker.postMessage(durationMs);
      return Promise.race([answered, ended]);
    },
    async stop() {
      await worker.terminate();
    },
  };
}
