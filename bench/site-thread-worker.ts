/**
 * A test website on a worker thread (see site-thread.ts): started with the thread, it answers
 * each request from the bench with a reply carrying the request's id.
 */
import { parentPort, workerData } from "node:worker_threads";
import { startLoginSite } from "../test/sites/login-site.ts";
import { startRotatingSessionSite } from "../test/sites/rotating-session-site.ts";
import { startScriptSites } from "../test/sites/script-sites.ts";
import { answerAs, type Connection } from "../test/support/login-flows.ts";
import type { BenchSite, SiteReply, SiteRequest } from "./site-thread.ts";

const port = parentPort;
if (!port) throw new Error("site-thread-worker.ts runs only as a worker thread");

interface HostedSite {
  url: string;
  loginUrl: string;
  answer(step: Connection): object;
  serverTimeMs(): number;
  resetServerTime(): void;
  stop(): Promise<void>;
}

async function hosted(kind: BenchSite): Promise<HostedSite> {
  if (kind === "login") {
    const site = await startLoginSite();
    return { ...site, url: site.url, loginUrl: `${site.url}/plain/login`, answer: (step) => answerAs(site, "plain", step) };
  }
  if (kind === "rotating") {
    const site = await startRotatingSessionSite();
    const { email, password } = site.user;
    return {
      ...site,
      url: site.origin,
      loginUrl: site.loginUrl("storage"),
      answer: (step) => ({ field_values: Object.fromEntries((step.fields ?? []).map((field) => [field.id, field.type === "password" ? password : email])) }),
    };
  }
  const sites = await startScriptSites();
  const typed = { identifier: sites.user.email, password: sites.user.password } as Record<string, string>;
  return {
    ...sites,
    url: sites.url,
    loginUrl: sites.loginUrl("spa"),
    answer: (step) => ({ field_values: Object.fromEntries((step.fields ?? []).map((field) => [field.id, typed[field.type] ?? ""])) }),
  };
}

const site = await hosted((workerData as { site: BenchSite }).site);
port.postMessage({ id: 0, started: { url: site.url, loginUrl: site.loginUrl } } satisfies SiteReply);
port.on("message", async (request: SiteRequest) => {
  switch (request.call) {
    case "answer":
      port.postMessage({ id: request.id, answer: site.answer(request.step as Connection) } satisfies SiteReply);
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
