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
  let failure: Error | undefined;
  const failed = new Promise<never>((_, reject) => {
    worker.once("error", (error) => reject((failure = error)));
    worker.once("exit", (code) => reject((failure ??= new Error(`the ${setup.scenario} clients' thread exited with ${code}`))));
  });
  failed.catch(() => undefined);
  return {
    run(durationMs) {
      if (failure) return Promise.reject(failure);
      const answered = new Promise<LoadResult>((resolve) => worker.once("message", resolve));
      worker.postMessage(durationMs);
      return Promise.race([answered, failed]);
    },
    async stop() {
      worker.removeAllListeners("exit");
      await worker.terminate();
    },
  };
}
