/**
 * The test website on a worker thread (see site-thread.ts): started with the thread, it answers
 * each request from the bench with a reply carrying the request's id.
 */
import { parentPort } from "node:worker_threads";
import { startLoginSite } from "../test/sites/login-site.ts";
import { answerAs, type Connection } from "../test/support/login-flows.ts";
import type { SiteReply, SiteRequest } from "./site-thread.ts";

const port = parentPort;
if (!port) throw new Error("site-thread-worker.ts runs only as a worker thread");

const site = await startLoginSite();
port.postMessage({ id: 0, started: { url: site.url } } satisfies SiteReply);
port.on("message", async (request: SiteRequest) => {
  switch (request.call) {
    case "plainAnswer":
      port.postMessage({ id: request.id, answer: answerAs(site, "plain", request.step as Connection) } satisfies SiteReply);
      return;
    case "serverTimeMs":
      port.postMessage({ id: request.id, serverTimeMs: site.serverTimeMs() } satisfies SiteReply);
      return;
    case "resetServerTime":
      site.resetServerTime();
      port.postMessage({ id: request.id } satisfies SiteReply);
      return;
    case "stop":
      await site.stop();
      port.postMessage({ id: request.id } satisfies SiteReply);
      port.close();
  }
});
