/** The clients of one connections route on a thread of their own; see route-clients.ts. */
import { parentPort, workerData } from "node:worker_threads";
import { expectStatus, keepAliveClient } from "./http-client.ts";
import { roundRobin, runLoad } from "./load.ts";
import { profileOfWorker, uniqueDomain, type RouteClientsSetup, type RouteScenario } from "./route-clients.ts";

const port = parentPort;
if (!port) throw new Error("route-clients-worker.ts runs only as a worker thread");
const setup = workerData as RouteClientsSetup;
const client = keepAliveClient(setup.url, { bearer: setup.apiKey, maxSockets: setup.concurrency });
const nextConnectionId = roundRobin(setup.fixture.connectionIds);

const operations: Record<RouteScenario, (worker: number) => Promise<void>> = {
  async create(worker) {
    const body = { domain: uniqueDomain("route"), profile_name: profileOfWorker(setup.fixture, worker) };
    expectStatus(await client.send("POST", "/auth/connections", body), 201);
  },
  async get() {
    expectStatus(await client.send("GET", `/auth/connections/${encodeURIComponent(nextConnectionId())}`), 200);
  },
  async list() {
    expectStatus(await client.send("GET", `/auth/connections?limit=${setup.listLimit}`), 200);
  },
};

const operation = operations[setup.scenario];
port.on("message", async (durationMs: number) => {
  port.postMessage(await runLoad({ concurrency: setup.concurrency, durationMs }, operation));
});
