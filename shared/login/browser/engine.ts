import type { IncomingHttpHeaders } from "node:http";
import type { BrowserContext, Frame, Locator, Page, Request, Response, Route } from "playwright-core";
import type { StorageState } from "../../archive/storage-state.ts";
import { Deadline } from "../../deadline.ts";
import { newId } from "../../ids.ts";
import { log } from "../../log.ts";
import {
  addRequirement,
  asksToSignIn,
  checkBlocked,
  checkCredentialHost,
  FlowFailure,
  homePageUrls,
  isNextLoginStep,
  isSameStep,
  outcomeOf,
  pathOf,
  recordFields,
  RefusedRequestError,
  refusalOf,
  showStep,
  successOutcome,
  unprovenSession,
  type StepProgress,
} from "../kernel.ts";
import { isLoginUrl, type LoginStep } from "../forms.ts";
import { basicAuthorization, basicAuthStep, basicChallengeOf, basicPasswordField, basicRejectionMessages, basicUserField, unkeptBasicSession } from "../http-auth.ts";
import { credentialHostRefusal, hostOf, scopeRefusal } from "../../policy/scope.ts";
import { siteErrorOf } from "../site-message.ts";
import { durableAnswer, readSubmission, type SubmissionIntent } from "../submission.ts";
import type { EngineState, LoginEngine, LoginTarget, MfaType, ProbeOutcome, SessionEvidence, StepOptions, StepOutcome, Submission } from "../types.ts";
import { learnInBrowser } from "./evidence-looks.ts";
import { captureBrowserState } from "./browser-state.ts";
import { navigate, NavigationError, navigationTimeoutMs, reload, unreachableReason } from "./chromium.ts";
import { discover, signInControls, type Discovery, type StepTargets } from "./discovery.ts";
import { refAttribute } from "./dom-snapshot.ts";
import { createFlowRegistry, type FlowRegistry } from "./flow-registry.ts";
import { probeInBrowser, type OpenBrowser, type OpenedBrowser } from "./probe.ts";
import { browserStateValues, startReplay, stopReplay, storedSecrets } from "./replay.ts";
import { settle, watchDom, watchNetwork, type DomWatch, type NetworkWatch } from "./settle.ts";

export interface BrowserEngineOptions {
  /** Opens a Chromium for one flow of `target` with the network policy in place (a forward proxy); `close` ends both. The composition supplies it. */
  openBrowser: OpenBrowser;
  /**
   * Keeps the trace of a flow of a target that records sessions (`recordSession`), typed secrets
   * already masked, and answers its replay id. Without it no flow is recorded.
   */
  saveReplay?: (target: LoginTarget, zip: Buffer) => Promise<string>;
  now?: () => Date;
}

/** What the engine keeps between steps; plain JSON (the orchestrator encrypts it at rest). */
interface BrowserFlowState extends StepProgress {
  version: 1;
  engine: "browser";
  /** The live browser holding the flow's page, in this process's registry. */
  browserSessionId: string;
  /** The live elements the step's fields and choices are answered in. */
  targets: StepTargets;
  /** Choices made, by the step they answered: a flow resumed in a new browser makes them again, as it answers the durable values again. */
  choicesMade: Array<{ signature: string; choiceId: string }>;
}

/** What binds and records a step's answer: the stored credential's domain, and the code boxes its TOTP secret answered (StepOptions). */
type AnswerOptions = Pick<StepOptions, "credentialDomain" | "totpCodeFields">;

interface SiteAnswer {
  status: number;
  headers: IncomingHttpHeaders;
}

/** A main-frame document: the site's answer, or why it did not load. */
type LastDocument = { url: string } & ({ answer: SiteAnswer } | { failure: string });

/** A flow left without a submission this long has been abandoned: its browser is closed. */
const idleLimitMs = 15 * 60 * 1000;
const actionTimeoutMs = 5_000;
const loadSettleMs = 5_000;
/** How long after a submit the page may take to show its answer (a new step, an error, the signed-in page). */
const answerWaitMs = 10_000;
/**
 * The page's quiet that makes a same step shown again without a word the answer: a page that changes
 * or talks to its site within it is still at work, and is looked at again (up to `answerWaitMs`).
 */
const silentRetryMs = 1_500;
/**
 * How long the search for the login watches pages that show neither a login step, a signed-in page
 * nor a sign-in control: an app may load megabytes of script and ask its server whether a session
 * exists before it draws its login. Each change of the page is looked at; a login found ends the wait.
 */
const lateLoginWaitMs = 15_000;
const maxSignInControls = 3;
const maxReplaySteps = 6;

/**
 * The live browsers of this process's flows, by browser session id: one registry for the process, so
 * a submission reaches the browser its flow's start opened whichever engine object takes it.
 */
const liveLogins = createFlowRegistry<LiveLogin>(idleLimitMs);

/**
 * One flow's login in its own browser, from the page it opens to its end: it finds the login, answers
 * each step, decides what the page's answer means and learns the signed-in page's evidence. It lives
 * in `registry` between submissions.
 */
class LiveLogin {
  readonly id = newId("bs");
  /**
   * The main frame's last document since the engine's last action, for the checks that read a status
   * (bot walls, rate limits), or why it did not load. One from before the action (a login page served
   * with 401) says nothing of what the action did.
   */
  private lastDocument: LastDocument | null = null;
  /** A rate-limiting answer to one of the page's own calls since the last action (a single-page app's login API). */
  private limitedCall: SiteAnswer | null = null;
  /** Why a request repeating a stored credential's POST was stopped during the last action, if one was. */
  private credentialRefusal: string | null = null;
  /** Set while the flow is traced: the values typed and the values the browser kept so far, which the trace must not show. */
  private readonly recording: { secrets: Set<string> } | null;
  private readonly network: NetworkWatch;
  /** The running step's deadline, which bounds its every wait; none, and each wait has only its own budget. */
  private deadline: Deadline | undefined;
  /** The page's document since the last look began reading it. */
  private sinceLook: DomWatch | null = null;
  /** The HTML the site served for the main frame's current document, as the response's body is read. */
  private servedHtml: Promise<string | null> = Promise.resolve(null);

  private readonly opened: OpenedBrowser;
  private readonly context: BrowserContext;
  private readonly page: Page;
  private readonly target: LoginTarget;
  private readonly options: BrowserEngineOptions;
  private readonly registry: FlowRegistry<LiveLogin>;

  private constructor(opened: OpenedBrowser, context: BrowserContext, page: Page, target: LoginTarget, options: BrowserEngineOptions, registry: FlowRegistry<LiveLogin>) {
    this.opened = opened;
    this.context = context;
    this.page = page;
    this.target = target;
    this.options = options;
    this.registry = registry;
    this.recording = target.recordSession && options.saveReplay ? { secrets: new Set() } : null;
    this.network = watchNetwork(page);
    page.on("response", (response: Response) => {
      const request = response.request();
      const answer = { status: response.status(), headers: response.headers() };
      if (request.isNavigationRequest() && response.frame() === page.mainFrame()) {
        this.lastDocument = { url: response.url(), answer };
        // A redirect has no body to read: the document it leads to replaces this one.
        this.servedHtml = response.text().catch(() => null);
      } else if (["fetch", "xhr"].includes(request.resourceType()) && (answer.status === 429 || (answer.status >= 400 && answer.headers["retry-after"] !== undefined))) {
        this.limitedCall = answer;
      }
    });
    page.on("requestfailed", (request: Request) => {
      const failure = request.failure()?.errorText ?? "net::ERR_FAILED";
      // An abort is a navigation given up for another one, a download, or an answer without content: none is a failure of the site.
      if (request.isNavigationRequest() && request.frame() === page.mainFrame() && !failure.includes("ERR_ABORTED")) {
        this.lastDocument = { url: request.url(), failure };
      }
    });
  }

  /** Opens a browser for a flow of `target` and keeps it in `registry`. */
  static async open(target: LoginTarget, options: BrowserEngineOptions, registry: FlowRegistry<LiveLogin>): Promise<LiveLogin> {
    const opened = await options.openBrowser(target);
    let flow: LiveLogin;
    try {
      const context = await opened.browser.newContext();
      context.setDefaultTimeout(actionTimeoutMs);
      context.setDefaultNavigationTimeout(navigationTimeoutMs);
      if (target.recordSession && options.saveReplay) await startReplay(context);
      flow = new LiveLogin(opened, context, await context.newPage(), target, options, registry);
    } catch (error) {
      await opened.close();
      throw error;
    }
    registry.add(flow.id, flow);
    return flow;
  }

  /** Ends the browser; the registry calls it once the flow is done or idle too long. */
  close(): Promise<void> {
    return this.opened.close();
  }

  /** Runs a step by `deadline`; any end but another input keeps the flow's replay and closes its browser. */
  async step(deadline: Deadline | undefined, run: () => Promise<StepOutcome>): Promise<StepOutcome> {
    this.deadline = deadline;
    const outcome = await outcomeOf(() => run().catch((error: unknown) => Promise.reject(this.asFlowFailure(error))));
    if (outcome.kind === "input") return outcome;
    const replayId = await this.end(true);
    return this.recording ? { ...outcome, replayId } : outcome;
  }

  /** Closes the flow's browser, first saving its trace when asked to; answers the replay id. */
  async end(keepReplay: boolean): Promise<string | null> {
    let replayId: string | null = null;
    const save = this.options.saveReplay;
    if (this.recording && keepReplay && save) {
      // A replay is for debugging: failing to keep one never changes how the login ended.
      replayId = await stopReplay(this.context, this.recording.secrets)
        .then((zip) => save(this.target, zip))
        .catch((error: unknown) => {
          log.warn("the flow's replay could not be kept", { browserSessionId: this.id, error: error instanceof Error ? error.name : "unknown" });
          return null;
        });
    }
    await this.registry.close(this.id);
    return replayId;
  }

  /** The login's first step: the flow's state and the prompt. */
  async begin(): Promise<StepOutcome> {
    const found = await this.findLogin();
    return inputOutcome(newState(this.id, found), found.step, null);
  }

  /**
   * The flow's former browser is gone (another process, a crash, the idle limit): this one starts the
   * login again and gives the answers already given, up to the step the submission answers. A
   * one-time code is not replayed: a code sent to the person belongs to the old attempt, so the step
   * asking for one is shown again. `options.credentialDomain` binds the answers given again as it binds the submission.
   */
  async resume(saved: BrowserFlowState, submission: Submission, options: AnswerOptions): Promise<StepOutcome> {
    const state = newState(this.id, await this.findLogin());
    state.durableValues = { ...saved.durableValues };
    state.typedHosts = { ...saved.typedHosts };
    state.requirements = [...saved.requirements];
    state.ssoProvider = saved.ssoProvider;
    let outcome: StepOutcome = inputOutcome(state, { prompt: state.prompt, plan: state.step }, null);
    for (let hop = 0; hop < maxReplaySteps && outcome.kind === "input"; hop++) {
      if (state.step.signature === saved.step.signature) {
        state.rejections = saved.rejections;
        const intent = readSubmission(state.prompt, submission);
        if ("problem" in intent) return outcome;
        const values = intent.kind === "nothing" ? {} : intent.values;
        const givesCode = state.step.fields.some((field) => (field.type === "code" || field.type === "totp_code") && values[field.id]);
        return givesCode ? outcome : this.answer(state, submission, options);
      }
      const replay = replayOf(state, saved);
      if (!replay) return outcome;
      const before = state.step.signature;
      outcome = await this.answer(state, replay, { credentialDomain: options.credentialDomain });
      if (state.step.signature === before) return outcome;
    }
    return outcome;
  }

  /** Finds the login in the rendered page of `loginUrl` (or the home page), behind a sign-in control if need be. */
  private async findLogin(): Promise<Discovery & { step: LoginStep }> {
    const entryUrl = await this.openEntry();
    // One bound for the whole search: the entry page and the pages its sign-in controls lead to.
    const patience = this.budget(lateLoginWaitMs);
    const controlsOf = (found: Discovery) => signInControls(found.model, (url) => scopeRefusal(url, this.target, { allowPrivateTargets: true }) === null);
    let found = await this.awaitLogin(patience, (entry) => controlsOf(entry).length > 0);
    if (found.step) return found as Discovery & { step: LoginStep };
    const entryPath = pathOf(this.page.url());
    const controls = controlsOf(found).slice(0, maxSignInControls);
    for (const [index, control] of controls.entries()) {
      this.beginAction();
      if (index > 0) await navigate(this.page, entryUrl, { timeoutMs: this.boundedMs(navigationTimeoutMs) });
      if (control.href) await navigate(this.page, control.href, { timeoutMs: this.boundedMs(navigationTimeoutMs) });
      else {
        const clicked = await locate(this.page, control.ref)
          .then((element) => element.click())
          .then(() => true, () => false);
        if (!clicked) continue;
      }
      found = await this.awaitLogin(patience, () => false);
      if (found.step) return found as Discovery & { step: LoginStep };
    }
    throw new FlowFailure("login_form_not_found", `no login form in the rendered page at ${entryPath} nor behind a sign-in control on it`);
  }

  /** Loads `loginUrl`, or the domain's home page as the HTTP engine does (`homePageUrls`); answers the URL loaded. */
  private async openEntry(): Promise<string> {
    const candidates = this.target.loginUrl ? [this.target.loginUrl] : homePageUrls(this.target.domain);
    const last = candidates.pop()!;
    for (const url of candidates) {
      this.beginAction();
      const loaded = await navigate(this.page, url, { timeoutMs: this.boundedMs(navigationTimeoutMs) }).then(
        () => true,
        (error: unknown) => {
          if (error instanceof NavigationError) return false;
          throw error;
        },
      );
      if (loaded) return url;
    }
    this.beginAction();
    await navigate(this.page, last, { timeoutMs: this.boundedMs(navigationTimeoutMs) });
    return last;
  }

  /**
   * The page once it shows a login step, a signed-in page or what `enough` accepts, or as it is when
   * `patience` has passed. A page that shows none of them may be an app still loading (a large script,
   * then a request asking its server whether a session exists, then its login drawn): it is looked at
   * again at each change of its document, never judged by its first quiet moment alone.
   */
  private async awaitLogin(patience: Deadline, enough: (found: Discovery) => boolean): Promise<Discovery> {
    for (;;) {
      // Each look settles within the patience left, so the wait in all stays within its bound.
      const found = await this.look(null, [], patience.within(loadSettleMs));
      checkBlocked(this.siteAnswer(found), found.step !== null, [], this.now());
      if (found.step || found.model.hasSignOut || enough(found) || patience.passed) return found;
      if (!(await this.changedSinceLook(patience.remainingMs(), patience))) return found;
    }
  }

  /** The settled page, analysed; a main document that did not come from the site ends the flow. */
  private async look(chosenMfa: MfaType | null, secrets: readonly string[], settledBy = this.budget(loadSettleMs)): Promise<Discovery> {
    await settle(this.page, this.network, settledBy);
    const failure = this.documentFailure();
    if (failure) throw failure;
    // Watched from before the snapshot: a change while it is read is one the page made after this look.
    await this.sinceLook?.stop();
    this.sinceLook = await watchDom(this.page, refAttribute);
    const found = await discover(this.page, chosenMfa, secrets, await settledBy.race(this.servedHtml, null));
    // The browser's own prompt is no part of the page: a document answered with a Basic challenge asks it.
    const answer = this.documentAnswer();
    const challenge = answer && basicChallengeOf(answer);
    return challenge ? { ...found, step: basicAuthStep(this.page.url(), challenge), targets: { fields: {}, choices: {}, submitRef: null } } : found;
  }

  /** Whether the page changed since the last look (or left its document) within `ms` of its own time, never past `deadline`. */
  private changedSinceLook(ms: number, deadline: Deadline): Promise<boolean> {
    return this.sinceLook ? this.sinceLook.changed(ms, deadline) : Promise.resolve(true);
  }

  /** Fills and sends what the submission answers, then decides from what the page does. */
  async answer(state: BrowserFlowState, submission: Submission, options: AnswerOptions): Promise<StepOutcome> {
    const intent = readSubmission(state.prompt, submission);
    if ("problem" in intent) return inputOutcome(state, { prompt: state.prompt, plan: state.step }, intent.problem);
    const { credentialDomain } = options;
    if (state.step.basicAuth && intent.kind === "fields") return this.answerBasic(state, intent.values, options);
    if (credentialDomain === undefined || intent.kind === "nothing" || Object.keys(intent.values).length === 0) return this.act(state, intent, options);
    const unguard = await this.guardRepeatedPosts(credentialDomain);
    try {
      return await this.act(state, intent, options);
    } finally {
      await unguard();
    }
  }

  /** The answer itself: records, types (a stored credential's values only within `credentialDomain`), sends and decides. */
  private async act(state: BrowserFlowState, intent: SubmissionIntent, { credentialDomain, totpCodeFields }: AnswerOptions): Promise<StepOutcome> {
    // Whatever its field's type: a memorable word or a customer number is as durable as a password.
    if (intent.kind !== "nothing") this.keepOutOfReplay(Object.values(intent.values));
    // A script may have drawn the step again since it was shown (same fields, new elements): act on what is there now.
    const current = await discover(this.page, state.chosenMfa, []);
    const targets = current.step?.plan.signature === state.step.signature ? current.targets : state.targets;
    const secrets: string[] = [];
    const before = await this.sessionFingerprint();
    const urlBefore = this.page.url();
    this.beginAction();
    if (intent.kind === "choice") {
      const choice = state.step.choices.find((candidate) => candidate.id === intent.choiceId)!;
      state.requirements = addRequirement(state.requirements, choice.type === "sso_provider" ? null : "choice");
      if (choice.mfaType) state.chosenMfa = choice.mfaType;
      if (choice.provider) state.ssoProvider = choice.provider;
      state.choicesMade.push({ signature: state.step.signature, choiceId: choice.id });
      // Values typed beside a choice go with it when the choice belongs to the same form.
      const values = choice.form !== undefined && choice.form === state.step.fieldForm ? intent.values : {};
      recordFields(state, values, secrets, hostOf(new URL(this.page.url())), totpCodeFields);
      await fillFields(this.page, targets, values, credentialDomain);
      const pressed = targets.choices[choice.id];
      if (!pressed) throw new FlowFailure("internal_error", "the page no longer shows the chosen option");
      const element = await locate(this.page, pressed.ref);
      if ((await element.getAttribute("type")) === "radio") {
        await element.check();
        await send(this.page, pressed.submitRef, element);
      } else await element.click();
    } else if (intent.kind === "fields") {
      recordFields(state, intent.values, secrets, hostOf(new URL(this.page.url())), totpCodeFields);
      const last = await fillFields(this.page, targets, intent.values, credentialDomain);
      await send(this.page, targets.submitRef, last);
    }
    return this.decide(state, intent.kind !== "nothing", secrets, before, urlBefore);
  }

  /**
   * Answers an HTTP Basic challenge as the browser's prompt would, for one request: the page's
   * address loaded again, its request sent by the context's own client with the `Authorization`
   * header and the context's cookies (through the browser's proxy) and not following redirects, its
   * answer handed to the page. The browser follows a redirect itself, without the header: Playwright
   * would carry a header added by `route.continue` to every redirect, another host's included, and
   * Chromium's own prompt answer (CDP `Fetch.continueWithAuth`) is cached and sent again by itself,
   * which would hide a site that keeps no session without the password.
   */
  private async answerBasic(state: BrowserFlowState, values: Record<string, string>, { credentialDomain, totpCodeFields }: AnswerOptions): Promise<StepOutcome> {
    const pageUrl = state.step.pageUrl;
    if (credentialDomain !== undefined) checkCredentialHost(credentialDomain, pageUrl);
    const answer = basicAuthorization(values[basicUserField] ?? "", values[basicPasswordField] ?? "");
    if ("problem" in answer) return inputOutcome(state, { prompt: state.prompt, plan: state.step }, answer.problem);
    this.keepOutOfReplay([...Object.values(values), answer.authorization]);
    const secrets: string[] = [];
    recordFields(state, values, secrets, hostOf(new URL(pageUrl)), totpCodeFields);
    const before = await this.sessionFingerprint();
    const isPage = (url: URL) => url.href === pageUrl;
    const authorize = async (route: Route) => {
      const request = route.request();
      if (!request.isNavigationRequest() || request.frame() !== this.page.mainFrame()) return route.fallback();
      try {
        const response = await route.fetch({ headers: { ...request.headers(), authorization: answer.authorization }, maxRedirects: 0 });
        await route.fulfill({ response });
      } catch {
        await route.abort("failed").catch(() => undefined);
      }
    };
    await this.page.route(isPage, authorize);
    this.beginAction();
    try {
      await navigate(this.page, pageUrl, { timeoutMs: this.boundedMs(navigationTimeoutMs) });
    } finally {
      await this.page.unroute(isPage, authorize);
    }
    return this.decide(state, true, secrets, before, pageUrl);
  }

  /**
   * The page a Basic password opened, loaded again with the cookies alone: what a profile keeps, so
   * a site that needs the password with every request ends the flow (`unkeptBasicSession`).
   */
  private async withCookiesAlone(url: string): Promise<Discovery> {
    this.beginAction();
    await navigate(this.page, url, { timeoutMs: this.boundedMs(navigationTimeoutMs) });
    const found = await this.look(null, []);
    const refusal = found.step ? "it asks to sign in again" : refusalOf({ status: this.documentAnswer()?.status ?? 200, url: this.page.url(), body: found.html }, found.model, url);
    if (refusal) throw unkeptBasicSession(url, refusal);
    return found;
  }

  /**
   * Waits for the page's answer and reads it as the HTTP engine reads a response: another step
   * (the same one again is a rejection; a box that asks nothing a login asks is none once new session
   * state shows), a block, or success, which needs evidence: the login form gone and new session state
   * (cookies, storage) or a page off the login pages, and a page that shows the session (`succeed`).
   */
  private async decide(state: BrowserFlowState, answered: boolean, secrets: string[], before: Set<string>, urlBefore: string): Promise<StepOutcome> {
    const answerBy = this.budget(answerWaitMs);
    const answeredBasic = state.step.basicAuth !== undefined;
    for (;;) {
      const found = await this.look(state.chosenMfa, secrets, answerBy);
      const url = this.page.url();
      const step = found.step && (await isNextLoginStep(found.step, state.step, () => this.sessionChangedSince(before))) ? found.step : null;
      const shownAgain = step !== null && isSameStep(step, state.step);
      const shownBefore = new Set(state.formMessages);
      const answers = found.messages.filter((message) => !shownBefore.has(message.text));
      const heard = shownAgain && step.plan.basicAuth ? basicRejectionMessages(found.messages, shownBefore) : { said: found.messages, standing: found.messages };
      const siteError = siteErrorOf(heard.said);
      checkBlocked(this.siteAnswer(found), shownAgain || (step ? asksToSignIn(step) : isLoginUrl(url)), answers, this.now());
      if (step) {
        // The same step without a word may be the page still at work (a request not sent yet, a progress
        // shown): no answer while it keeps changing or talking to its site.
        // A 401 to a Basic password is the server's own answer, never a page at work.
        if (shownAgain && answered && !answeredBasic && found.messages.length === 0 && !answerBy.passed && (await this.stillAtWork(answerBy))) continue;
        showStep(state, step, answered && shownAgain, heard.standing, siteError);
        state.targets = found.targets;
        return inputOutcome(state, step, siteError);
      }
      const status = this.documentAnswer()?.status ?? 200;
      if (status >= 400) throw new FlowFailure("internal_error", `the site refused the submitted step (HTTP ${status}${siteError ? `: ${siteError}` : ""})`);
      if (siteError && isLoginUrl(url)) throw new FlowFailure("credentials_invalid", `the site stopped the login: ${siteError}`);
      const newState = await this.sessionChangedSince(before);
      if (answeredBasic) {
        if (!newState) throw unkeptBasicSession(url, null);
        return this.succeed(state, await this.withCookiesAlone(url));
      }
      const leftLogin = url !== urlBefore && !isLoginUrl(url);
      if (newState || leftLogin) return this.succeed(state, found);
      if (answerBy.passed) throw new FlowFailure("internal_error", "the login form went away but the site set no new session state and stayed on the login page");
      // Looked at again when the page changes, or after a moment of quiet: a session may be kept without a change to see.
      await this.changedSinceLook(silentRetryMs, answerBy);
    }
  }

  /** The page changes within a moment of its own quiet, or a request of its is open. */
  private async stillAtWork(by: Deadline): Promise<boolean> {
    return (await this.changedSinceLook(silentRetryMs, by)) || this.network.busy();
  }

  private async succeed(state: BrowserFlowState, landed: Discovery): Promise<StepOutcome> {
    const learnt = await this.learnEvidence(landed, state.durableValues.identifier ? [state.durableValues.identifier] : []);
    const unproven = unprovenSession(landed.model, learnt.evidence);
    if (unproven) throw new FlowFailure("unsupported_auth_method", unproven);
    // Captured after the evidence reload, the service's last load of the signed-in page: an app that
    // renews its session on every load (a rotated refresh token) has spent what the login set.
    const session = await captureBrowserState(this.context);
    this.keepOutOfReplay(storedSecrets(browserStateValues(session)));
    return successOutcome(state, session, learnt, "browser");
  }

  /**
   * What the health checks will look for: the landing page as the signed-in browser shows it now and
   * after a reload, against the same address in a context without the session (loaded meanwhile).
   */
  private async learnEvidence(landed: Discovery, identifiers: string[]): Promise<{ evidence: SessionEvidence; postLoginUrl: string }> {
    // The login has worked: a step near its deadline still learns its evidence, with each wait's own budget.
    this.deadline = undefined;
    const url = this.page.url();
    const evidence = await learnInBrowser({
      browser: this.opened.browser,
      context: this.context,
      url,
      first: landed.model,
      again: async () => {
        const response = await reload(this.page, { timeoutMs: navigationTimeoutMs });
        const found = await this.look(null, []);
        return { model: found.model, status: response?.status() ?? 200 };
      },
      identifiers,
      settleMs: loadSettleMs,
    });
    return { evidence, postLoginUrl: url };
  }

  /** What `checkBlocked` reads: the site's last answer since the action (a limited call of the page's, else its document) and the page shown. */
  private siteAnswer(found: Discovery) {
    const answer = this.limitedCall ?? this.documentAnswer() ?? { status: 200, headers: {} };
    return { page: { ...answer, url: this.page.url() }, model: found.model };
  }

  /** A wait of `ms` from now, or until the step's deadline when that comes first. */
  private budget(ms: number): Deadline {
    return this.deadline?.within(ms) ?? Deadline.in(ms);
  }

  /** The same in milliseconds, for Playwright's timeouts (at least 1: Playwright reads 0 as no limit). */
  private boundedMs(ms: number): number {
    return Math.max(1, this.budget(ms).remainingMs());
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Everything a login could have set, as comparable entries; a traced flow's replay masks the values read. */
  private async sessionFingerprint(): Promise<Set<string>> {
    const cookies = (await this.context.cookies()).map((cookie) => ({ place: `cookie ${cookie.domain}${cookie.path} ${cookie.name}`, value: cookie.value }));
    const storage = await Promise.all(this.page.frames().map((frame) => frame.evaluate(storageEntries).catch(() => [] as StoredEntry[])));
    const entries = [...cookies, ...storage.flat()];
    this.keepOutOfReplay(storedSecrets(entries.map((entry) => entry.value)));
    return new Set(entries.map((entry) => `${entry.place}=${entry.value}`));
  }

  /** The browser holds a cookie or stored value that `before` (a `sessionFingerprint`) did not. */
  private async sessionChangedSince(before: Set<string>): Promise<boolean> {
    return [...(await this.sessionFingerprint())].some((entry) => !before.has(entry));
  }

  /** Values the flow's replay must mask wherever they show. */
  private keepOutOfReplay(values: Iterable<string>): void {
    if (!this.recording) return;
    for (const value of values) if (value) this.recording.secrets.add(value);
  }

  /** The engine is about to act on the page (load, click, send): what the site answered before belongs to the last action. */
  private beginAction(): void {
    this.lastDocument = null;
    this.limitedCall = null;
    this.credentialRefusal = null;
  }

  /**
   * While a stored credential's values are typed and sent: a redirect that would repeat their POST
   * (307, 308) to a host outside the credential's domain is failed before it leaves, as the HTTP
   * engine refuses it. Playwright's routes never see a redirect's request, so this asks Chromium
   * itself to pause each request. Answers what removes the guard.
   */
  private async guardRepeatedPosts(credentialDomain: string): Promise<() => Promise<void>> {
    const session = await this.context.newCDPSession(this.page);
    session.on("Fetch.requestPaused", (event) => {
      const refusal = event.redirectedRequestId !== undefined && event.request.method === "POST" ? credentialHostRefusal(credentialDomain, new URL(event.request.url)) : null;
      if (refusal) this.credentialRefusal = refusal;
      const decided = refusal
        ? session.send("Fetch.failRequest", { requestId: event.requestId, errorReason: "BlockedByClient" })
        : session.send("Fetch.continueRequest", { requestId: event.requestId });
      // The page may be gone meanwhile: its requests with it.
      decided.catch(() => undefined);
    });
    await session.send("Fetch.enable", { patterns: [{ urlPattern: "*", requestStage: "Request" }] });
    return () => session.detach().catch(() => undefined);
  }

  private documentAnswer(): SiteAnswer | null {
    return this.lastDocument && "answer" in this.lastDocument ? this.lastDocument.answer : null;
  }

  /**
   * Why the main document since the last action did not come from the site, or null: a stored
   * credential's POST was stopped on its way out of the credential's domain, the network policy
   * refused it (an answer the HTTP engine gives for the same request, so both engines end such a flow
   * alike), or the site could not be reached.
   */
  private documentFailure(): Error | null {
    if (this.credentialRefusal) return new RefusedRequestError("credential_domain", this.credentialRefusal);
    const document = this.lastDocument;
    if (!document) return null;
    const url = new URL(document.url);
    const key = `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}: `;
    // What the network policy refused so far, as `host:port: reason`.
    const refusal = (this.opened.refused?.() ?? []).find((entry) => entry.startsWith(key));
    // The proxy refuses a plain request with 403 and a tunnel before it opens; a 403 of a host it let through is the site's.
    if (refusal && ("failure" in document || document.answer.status === 403)) {
      const reason = refusal.slice(key.length);
      // The proxy asks the scope first, with the deployment's policy: a reason of the scope's is the login leaving its sites.
      const leavesScope = [true, false].some((allowPrivateTargets) => scopeRefusal(url, this.target, { allowPrivateTargets }) === reason);
      return leavesScope ? new RefusedRequestError("out_of_scope", `refused to follow the login: ${reason}`) : new RefusedRequestError("forbidden_address", `refused to connect to ${reason}`);
    }
    if ("failure" in document) return new FlowFailure("site_unreachable", `${url.host} could not be reached (${document.failure})`);
    return null;
  }

  /** A page that could not be loaded is the site's failure, not the engine's. */
  private asFlowFailure(error: unknown): unknown {
    if (!(error instanceof NavigationError)) return error;
    const reason = unreachableReason(error);
    return this.documentFailure() ?? (reason ? new FlowFailure("site_unreachable", reason, { cause: error }) : error);
  }
}

export function createBrowserLoginEngine(options: BrowserEngineOptions): LoginEngine {
  return {
    async start(target: LoginTarget, deadline?: Deadline): Promise<StepOutcome> {
      return outcomeOf(async () => {
        const flow = await LiveLogin.open(target, options, liveLogins);
        return flow.step(deadline, () => flow.begin());
      });
    },

    async submit(target: LoginTarget, engineState: EngineState, submission: Submission, { deadline, ...answering }: StepOptions = {}): Promise<StepOutcome> {
      return outcomeOf(async () => {
        const state = readState(engineState);
        const live = liveLogins.get(state.browserSessionId);
        if (live) return live.step(deadline, () => live.answer(state, submission, answering));
        const flow = await LiveLogin.open(target, options, liveLogins);
        return flow.step(deadline, () => flow.resume(state, submission, answering));
      });
    },

    probe(target: LoginTarget, session: StorageState, postLoginUrl: string, evidence: SessionEvidence | null): Promise<ProbeOutcome> {
      return probeInBrowser(options.openBrowser, target, session, postLoginUrl, evidence);
    },

    async release(engineState: EngineState, keepReplay = false): Promise<string | null> {
      const state = engineState as Record<string, unknown>;
      if (typeof state.browserSessionId !== "string") return null;
      const flow = liveLogins.get(state.browserSessionId);
      return flow ? flow.end(keepReplay) : null;
    },
  };
}

function newState(browserSessionId: string, found: Discovery & { step: LoginStep }): BrowserFlowState {
  return {
    version: 1,
    engine: "browser",
    browserSessionId,
    prompt: found.step.prompt,
    step: found.step.plan,
    targets: found.targets,
    chosenMfa: null,
    rejections: 0,
    formMessages: found.messages.map((message) => message.text),
    durableValues: {},
    requirements: [],
    ssoProvider: null,
    choicesMade: [],
  };
}

/** The answer a resumed flow gives again to the step it is at: durable values it was given, or the choice it made. */
function replayOf(state: BrowserFlowState, saved: BrowserFlowState): Submission | null {
  const given = durableAnswer(state.step.fields, saved.durableValues);
  if (given) return given;
  const made = saved.choicesMade.find((choice) => choice.signature === state.step.signature && state.step.choices.some((candidate) => candidate.id === choice.choiceId));
  return made ? { selected_choice_id: made.choiceId } : null;
}

/**
 * Types each value as a person would; returns the last field filled, where Enter sends the form.
 * Values of a credential stored for `credentialDomain` are typed only into a document of that
 * domain, in a form that sends them there, as the page is at the moment of typing.
 */
async function fillFields(page: Page, targets: StepTargets, values: Record<string, string>, credentialDomain: string | undefined): Promise<Locator | null> {
  let last: Locator | null = null;
  for (const [fieldId, value] of Object.entries(values)) {
    const ref = targets.fields[fieldId];
    if (ref === undefined) continue;
    const { frame, input } = await locateIn(page, ref);
    if (credentialDomain !== undefined) {
      checkCredentialHost(credentialDomain, frame.url());
      const action = await input.evaluate(formActionOf);
      if (action !== null && /^https?:/i.test(action)) checkCredentialHost(credentialDomain, action);
    }
    await input.fill(value);
    // A site that reformats or rejects programmatic input (masked code boxes, key handlers) gets keystrokes.
    if ((await input.inputValue()) !== value) {
      await input.fill("");
      await input.pressSequentially(value);
    }
    last = input;
  }
  return last;
}

/** Presses the form's button, or Enter where it has none (or an overlay keeps it from being clicked). */
async function send(page: Page, submitRef: string | null, typedIn: Locator | null): Promise<void> {
  if (submitRef !== null) {
    const clicked = await locate(page, submitRef)
      .then((button) => button.click())
      .then(() => true, () => false);
    if (clicked) return;
  }
  if (!typedIn) throw new FlowFailure("internal_error", "the page offers no way to send the step");
  await typedIn.press("Enter");
}

/** The element marked `ref`, in the page or one of its same-origin frames. */
async function locate(page: Page, ref: string): Promise<Locator> {
  return (await locateIn(page, ref)).input;
}

/** The element marked `ref` and the frame whose document holds it. */
async function locateIn(page: Page, ref: string): Promise<{ frame: Frame; input: Locator }> {
  const selector = `[${refAttribute}="${ref}"]`;
  for (const frame of page.frames()) {
    const found = frame.locator(selector);
    if ((await found.count().catch(() => 0)) > 0) return { frame, input: found.first() };
  }
  throw new FlowFailure("internal_error", "the page changed before the step could be answered");
}

/** Runs on an input: the address its form submits to, or null outside a form. */
function formActionOf(input: { form?: { action: string } | null }): string | null {
  return input.form ? input.form.action : null;
}

declare const location: { origin: string };
declare const localStorage: { readonly length: number; key(index: number): string | null; getItem(name: string): string | null };
declare const sessionStorage: typeof localStorage;
declare const indexedDB: { databases?(): Promise<Array<{ name?: string; version?: number }>> };

/** One thing a login could have set: where it is kept, and its value. */
interface StoredEntry {
  place: string;
  value: string;
}

/** Runs in a frame: its origin's storage (values stay in this process, never logged). */
async function storageEntries(): Promise<StoredEntry[]> {
  const entries: StoredEntry[] = [];
  try {
    for (const [kind, storage] of [["local", localStorage], ["session", sessionStorage]] as const) {
      for (let index = 0; index < storage.length; index++) {
        const name = storage.key(index);
        const value = name === null ? null : storage.getItem(name);
        if (name !== null && value !== null) entries.push({ place: `${kind} ${location.origin} ${name}`, value });
      }
    }
    for (const database of (await indexedDB.databases?.()) ?? []) entries.push({ place: `indexeddb ${location.origin} ${database.name}`, value: String(database.version) });
  } catch {
    // An opaque origin or storage the user agent denies holds no session.
  }
  return entries;
}

function inputOutcome(state: BrowserFlowState, step: Pick<LoginStep, "prompt" | "plan">, websiteError: string | null): Extract<StepOutcome, { kind: "input" }> {
  return { kind: "input", state: state as unknown as EngineState, prompt: step.prompt, websiteError, browserSessionId: state.browserSessionId };
}

function readState(engineState: EngineState): BrowserFlowState {
  const state = engineState as Record<string, unknown>;
  if (state.version !== 1 || state.engine !== "browser" || typeof state.browserSessionId !== "string" || typeof state.step !== "object") {
    throw new FlowFailure("internal_error", "the flow's saved state is not one the browser engine wrote");
  }
  return structuredClone(state) as unknown as BrowserFlowState;
}
