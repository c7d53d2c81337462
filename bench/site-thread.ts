import { Worker } from "node:worker_threads";
import type { Connection } from "../test/support/login-flows.ts";

/**
 * `login`: test/sites/login-site.ts, logged in to on its plain form. `script`: test/sites/script-sites.ts,
 * on its `spa` shape. `rotating`: test/sites/rotating-session-site.ts, on its `storage` shape (a token
 * in localStorage swapped at every load of the signed-in page).
 */
export type BenchSite = "login" | "script" | "rotating";

type SiteCall = { call: "answer"; step: Pick<Connection, "fields" | "choices"> } | { call: "serverTimeMs" | "resetServerTime" | "stop" };
export type SiteRequest = SiteCall & { id: number };
export type SiteReply = { id: number; started?: { url: string; loginUrl: string }; answer?: object; serverTimeMs?: number };

/**
 * A test website, as the login bench uses it, on a thread of its own: a real site is another
 * machine, and the bench's per-CPU-second figures read only the main thread, where the service runs.
 */
export interface SiteOnThread {
  url: string;
  /** Where the bench's logins start. */
  loginUrl: string;
  /** What the test user types into a step of the login. */
  answer(step: Pick<Connection, "fields" | "choices">): Promise<object>;
  /** Milliseconds the site spent in its handlers since the last reset. */
  serverTimeMs(): Promise<number>;
  resetServerTime(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSiteOnThread(site: BenchSite = "login"): Promise<SiteOnThread> {
  const worker = new Worker(new URL("./site-thread-worker.ts", import.meta.url), { workerData: { site } });
  const waiting = new Map<number, (reply: SiteReply) => void>();
  let lastId = 0;
  const started = new Promise<SiteReply>((resolve, reject) => {
    waiting.set(0, resolve);
    worker.once("error", reject);
  });
  worker.on("message", (reply: SiteReply) => {
    waiting.get(reply.id)?.(reply);
    waiting.delete(reply.id);
  });
  const ask = (call: SiteCall) =>
    new Promise<SiteReply>((resolve) => {
      const id = ++lastId;
      waiting.set(id, resolve);
      worker.postMessage({ ...call, id } satisfies SiteRequest);
    });
  const where = (await started).started;
  if (!where) throw new Error("the test site's thread did not start");
  return {
    ...where,
    answer: async (step) => (await ask({ call: "answer", step })).answer ?? {},
    serverTimeMs: async () => (await ask({ call: "serverTimeMs" })).serverTimeMs ?? Number.NaN,
    resetServerTime: async () => void (await ask({ call: "resetServerTime" })),
    stop: async () => {
      await ask({ call: "stop" });
      await worker.terminate();
    },
  };
}
