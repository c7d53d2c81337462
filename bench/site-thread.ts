import { Worker } from "node:worker_threads";
import type { Connection } from "../test/support/login-flows.ts";

type SiteCall = { call: "plainAnswer"; step: Pick<Connection, "fields" | "choices"> } | { call: "serverTimeMs" | "resetServerTime" | "stop" };
export type SiteRequest = SiteCall & { id: number };
export type SiteReply = { id: number; started?: { url: string }; answer?: object; serverTimeMs?: number };

/**
 * The test website, as the login bench uses it, on a thread of its own: a real site is another
 * machine, and the bench's per-CPU-second figures read only the main thread, where the service runs.
 */
export interface SiteOnThread {
  url: string;
  /** What the test user types into the plain form's step. */
  plainAnswer(step: Pick<Connection, "fields" | "choices">): Promise<object>;
  /** Milliseconds the site spent in its handlers since the last reset. */
  serverTimeMs(): Promise<number>;
  resetServerTime(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSiteOnThread(): Promise<SiteOnThread> {
  const worker = new Worker(new URL("./site-thread-worker.ts", import.meta.url));
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
  const url = (await started).started?.url;
  if (!url) throw new Error("the test site's thread did not start");
  return {
    url,
    plainAnswer: async (step) => (await ask({ call: "plainAnswer", step })).answer ?? {},
    serverTimeMs: async () => (await ask({ call: "serverTimeMs" })).serverTimeMs ?? Number.NaN,
    resetServerTime: async () => void (await ask({ call: "resetServerTime" })),
    stop: async () => {
      await ask({ call: "stop" });
      await worker.terminate();
    },
  };
}
