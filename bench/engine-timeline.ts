/**
 * The browser engine alone, with the time of each part of a flow: timestamps the bench takes around
 * the engine's calls to its browser (launch, close, the flow context's requests and page loads, the
 * storage-state capture, the second context that evidence learning opens), nothing timed inside
 * the service. Used in the bench's own process and in fresh ones (engine-process.ts).
 */
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { launchLoginBrowser } from "#shared/login/browser/chromium.ts";
import { discover } from "#shared/login/browser/discovery.ts";
import { createBrowserLoginEngine } from "#shared/login/browser/engine.ts";
import { startPolicyProxy } from "#shared/login/browser/network-policy-proxy.ts";
import { Deadline } from "#shared/deadline.ts";
import { settle, watchNetwork } from "#shared/login/browser/settle.ts";
import type { FlowPrompt, LoginEngine, LoginTarget, Submission } from "#shared/login/types.ts";

/** When each part of one engine-alone flow began and ended, from timestamps taken around the engine's calls to its browser. */
export interface EngineMarks {
  startCalled: number;
  launchStarted: number;
  launched: number;
  /** The flow's own context (not the one evidence learning opens without the session): each request, sent and finished. */
  requests: Map<Request, { sentAt: number; finishedAt?: number }>;
  loads: number[];
  contextsOpened: number;
  captureStarted?: number;
  evidenceStarted?: number;
  closeStarted?: number;
  closed?: number;
  startReturned: number;
  submitCalled: number;
  submitReturned: number;
  page?: Page;
}

const freshMarks = (): EngineMarks => ({
  startCalled: performance.now(),
  launchStarted: Number.NaN,
  launched: Number.NaN,
  requests: new Map(),
  loads: [],
  contextsOpened: 0,
  startReturned: Number.NaN,
  submitCalled: Number.NaN,
  submitReturned: Number.NaN,
});

/** Forwards everything to `target`, except the methods `overrides` names. */
function withOverrides<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (property in overrides) return overrides[property as keyof T];
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

/** The flow context, noting when the engine captures its state. */
function watchedContext(context: BrowserContext, marks: EngineMarks): BrowserContext {
  return withOverrides(context, {
    storageState: (...args: Parameters<BrowserContext["storageState"]>) => {
      marks.captureStarted ??= performance.now();
      return context.storageState(...args);
    },
  });
}

/** The browser, noting the flow context's requests and loads, and when the second context (evidence learning) opens. */
function watchedBrowser(browser: Browser, marks: EngineMarks): Browser {
  return withOverrides(browser, {
    newContext: async (...args: Parameters<Browser["newContext"]>) => {
      const opened = ++marks.contextsOpened;
      if (opened === 2) marks.evidenceStarted = performance.now();
      const context = await browser.newContext(...args);
      if (opened !== 1) return context;
      context.on("request", (request) => marks.requests.set(request, { sentAt: performance.now() }));
      context.on("requestfinished", (request) => {
        const seen = marks.requests.get(request);
        if (seen) seen.finishedAt = performance.now();
      });
      context.on("page", (page) => {
        marks.page ??= page;
        page.on("load", () => marks.loads.push(performance.now()));
      });
      return watchedContext(context, marks);
    },
  });
}

/**
 * The browser engine as the service composes it (shared/composition/login-engine.ts: a policy proxy
 * and a Chromium per flow), with timestamps around the launch and the close, and the browser watched.
 */
export interface InstrumentedEngine {
  engine: LoginEngine;
  /** Starts the marks of the next flow. */
  reset(): EngineMarks;
}

export function instrumentedEngine(executablePath: string): InstrumentedEngine {
  let marks = freshMarks();
  const engine = createBrowserLoginEngine({
    async openBrowser(target) {
      const flow = marks;
      flow.launchStarted = performance.now();
      const proxy = await startPolicyProxy({ target, allowPrivateTargets: true });
      try {
        const browser = await launchLoginBrowser({ executablePath, proxyServer: proxy.server });
        flow.launched = performance.now();
        return {
          browser: watchedBrowser(browser, flow),
          async close() {
            flow.closeStarted = performance.now();
            await browser.close();
            await proxy.close();
            flow.closed = performance.now();
          },
        };
      } catch (error) {
        await proxy.close();
        throw error;
      }
    },
  });
  return { engine, reset: () => (marks = freshMarks()) };
}

export type StartPart = "launch (policy proxy + Chromium)" | "context, page, first request" | "navigation (request to load)" | "settle + discovery";
export type SubmitPart =
  | "re-discovery, fill, click (to the login call)"
  | "the site's login API call"
  | "settle + discovery of the answer"
  | "capture (storage state)"
  | "evidence learning (reload + anonymous look)"
  | "browser close"
  | "rest";

export interface EngineFlow {
  startMs: number;
  submitMs: number;
  start: Record<StartPart, number>;
  submit: Record<SubmitPart, number>;
}

function phasesOf(marks: EngineMarks): EngineFlow {
  const requests = [...marks.requests.values()].sort((a, b) => a.sentAt - b.sentAt);
  const firstRequest = requests[0];
  const firstLoad = marks.loads[0];
  const loginCall = requests.find((request) => request.sentAt >= marks.submitCalled);
  const { captureStarted, evidenceStarted, closeStarted, closed } = marks;
  if (!firstRequest || firstLoad === undefined || !loginCall?.finishedAt || !captureStarted || !evidenceStarted || !closeStarted || !closed) {
    throw new Error("an engine flow went otherwise than the bench expects (no page load, login call, capture, evidence learning or close)");
  }
  return {
    startMs: marks.startReturned - marks.startCalled,
    submitMs: marks.submitReturned - marks.submitCalled,
    start: {
      "launch (policy proxy + Chromium)": marks.launched - marks.startCalled,
      "context, page, first request": firstRequest.sentAt - marks.launched,
      "navigation (request to load)": firstLoad - firstRequest.sentAt,
      "settle + discovery": marks.startReturned - firstLoad,
    },
    submit: {
      "re-discovery, fill, click (to the login call)": loginCall.sentAt - marks.submitCalled,
      "the site's login API call": loginCall.finishedAt - loginCall.sentAt,
      "settle + discovery of the answer": captureStarted - loginCall.finishedAt,
      "capture (storage state)": evidenceStarted - captureStarted,
      "evidence learning (reload + anonymous look)": closeStarted - evidenceStarted,
      "browser close": closed - closeStarted,
      rest: marks.submitReturned - closed,
    },
  };
}

/** One login with the engine alone: `answerOf` gives what the person types at the step. */
export async function timedEngineFlow(instrumented: InstrumentedEngine, answerOf: (prompt: FlowPrompt) => Promise<Submission>, target: LoginTarget): Promise<EngineFlow> {
  const marks = instrumented.reset();
  const form = await instrumented.engine.start(target);
  marks.startReturned = performance.now();
  if (form.kind !== "input") throw new Error(`engine start: expected the login form, got ${form.kind}`);
  const answer = await answerOf(form.prompt);
  marks.submitCalled = performance.now();
  const outcome = await instrumented.engine.submit(target, form.state, answer);
  marks.submitReturned = performance.now();
  if (outcome.kind !== "success") throw new Error(`engine submit: expected success, got ${outcome.kind}`);
  return phasesOf(marks);
}

/** On a started flow's settled login page: one more discovery, and a settle of the page already quiet (its floor). */
export async function timedAnatomy(instrumented: InstrumentedEngine, target: LoginTarget): Promise<{ discoveryMs: number; quietSettleMs: number }> {
  const marks = instrumented.reset();
  const form = await instrumented.engine.start(target);
  if (form.kind !== "input" || !marks.page) throw new Error("engine start: expected the login form in a page");
  try {
    const page = marks.page;
    const discovering = performance.now();
    await discover(page, null, []);
    const discoveryMs = performance.now() - discovering;
    const settling = performance.now();
    await settle(page, watchNetwork(page), Deadline.in(5_000));
    return { discoveryMs, quietSettleMs: performance.now() - settling };
  } finally {
    await instrumented.engine.release(form.state);
  }
}
