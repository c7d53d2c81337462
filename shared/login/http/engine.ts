import { isIP } from "node:net";
import type { CookieJar, SerializedCookieJar } from "tough-cookie";
import type { StorageState } from "../../archive/storage-state.ts";
import { log } from "../../log.ts";
import { analyzeStep, automaticRequest, encodeForm, hasPasswordForm, isLoginUrl, signInLinkRank, type LoginStep, type StepPlan } from "../forms.ts";
import { createWebClient, RefusedRequestError, UnreachableError, type NetworkOptions, type Page, type PageRequest } from "./client.ts";
import { parsePage, type PageModel } from "../page.ts";
import { judgeProbe } from "../probe-verdict.ts";
import { rateLimitOf } from "../rate-limit.ts";
import { credentialHostRefusal, hostOf, scopeRefusal, type ScopePolicy } from "../scope.ts";
import { siteErrorOf, siteMessages, type SiteMessage } from "../site-message.ts";
import { deserializeJar, emptyJar, jarToStorageState, serializeJar, storageStateToJar } from "../session.ts";
import { learnSessionEvidence, sessionCookieNames, unlearntEvidence, type SessionEvidence } from "../session-evidence.ts";
import { isDurableFieldType, readSubmission } from "../submission.ts";
import type {
  EngineState,
  FlowErrorCode,
  FlowPrompt,
  LoginEngine,
  LoginEngineKind,
  LoginRequirement,
  LoginTarget,
  MfaType,
  ProbeOutcome,
  StepOutcome,
  Submission,
} from "../types.ts";

/**
 * Makes `step` the flow's current one. When it is the step just answered, shown again, it counts as a
 * rejection, and the third in a row ends the flow.
 */
export function showStep(state: StepProgress, step: LoginStep, sameStep: boolean, messages: readonly SiteMessage[], siteError: string | null): void {
  state.rejections = sameStep ? state.rejections + 1 : 0;
  if (state.rejections >= maxRejections) {
    throw new FlowFailure("credentials_invalid", `the site rejected ${maxRejections} attempts in a row${siteError ? `: ${siteError}` : ""}`);
  }
  state.prompt = step.prompt;
  state.step = step.plan;
  state.formMessages = messages.map((message) => message.text);
}

/** Where a flow stands, as either engine keeps it between steps. */
export interface StepProgress {
  prompt: FlowPrompt;
  step: StepPlan;
  chosenMfa: MfaType | null;
  /** Times in a row the site answered a submit with the same step again. */
  rejections: number;
  /** The site's messages on the page the current step came from: one still shown after a submit is no answer to it. */
  formMessages: string[];
  /** Durable values typed so far, by credential ref. */
  durableValues: Record<string, string>;
  /** The host of the page each durable value was typed on, by credential ref: its credential is that site's. */
  typedHosts?: Record<string, string>;
  requirements: LoginRequirement[];
  ssoProvider: string | null;
}

/** What the engine keeps between steps; plain JSON (the orchestrator encrypts it at rest). */
interface FlowState extends StepProgress {
  version: 1;
  jar: SerializedCookieJar;
  /** Every URL requested so far, in order. */
  history: string[];
}

export type LoginEngineOptions = NetworkOptions;

interface Loaded {
  page: Page;
  model: PageModel;
}

const maxRejections = 3;
const maxAutomaticHops = 5;
const navigatesByItself = /http-equiv\s*=\s*["']?refresh|\.submit\(\s*\)/i;
const passwordInput = /type\s*=\s*["']?password/i;
const botWallWords = /just a moment|attention required|access denied|unusual traffic|automated (queries|requests|access)|are you a robot|request blocked/i;

export class FlowFailure extends Error {
  readonly errorCode: FlowErrorCode;
  readonly retryAfterSeconds: number | null;
  browserMayHelp = false;
  constructor(errorCode: FlowErrorCode, message: string, retryAfterSeconds: number | null = null) {
    super(message);
    this.errorCode = errorCode;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A failure where a browser, which runs the page's script, may still find or finish the login. */
function browserMayHelp(failure: FlowFailure): FlowFailure {
  failure.browserMayHelp = true;
  return failure;
}

export function createLoginEngine(options: LoginEngineOptions): LoginEngine {
  const web = createWebClient(options);

  /** Requests a page, then goes where the page sends a browser by itself (meta refresh, auto-submitted hand-off form). */
  async function load(jar: CookieJar, target: LoginTarget, request: PageRequest & { url: string }, history: string[]): Promise<Loaded> {
    let page = await web.fetchPage(jar, target, request.url, request);
    history.push(...page.visited);
    let model = parsePage(page.body, page.url);
    for (let hop = 0; hop < maxAutomaticHops; hop++) {
      const next = automaticRequest(model);
      if (!next) break;
      page = await web.fetchPage(jar, target, next.url, { ...next, referer: page.url });
      history.push(...page.visited);
      model = parsePage(page.body, page.url);
    }
    return { page, model };
  }

  async function start(target: LoginTarget): Promise<StepOutcome> {
    return outcomeOf(async () => {
      const jar = emptyJar();
      const history: string[] = [];
      // The search stops at the page whose form it found: the last one loaded.
      let formPage: Loaded | undefined;
      const step = await findLoginPage(target, options, async (url) => (formPage = await load(jar, target, { url }, history)));
      const state: FlowState = {
        version: 1,
        jar: serializeJar(jar),
        prompt: step.prompt,
        step: step.plan,
        history,
        chosenMfa: null,
        rejections: 0,
        formMessages: siteMessages(formPage!.model, []).map((message) => message.text),
        durableValues: {},
        requirements: [],
        ssoProvider: null,
      };
      return inputOutcome(state, step, null);
    });
  }

  async function submit(target: LoginTarget, engineState: EngineState, submission: Submission, credentialDomain?: string): Promise<StepOutcome> {
    return outcomeOf(async () => {
      const state = readState(engineState);
      const intent = readSubmission(state.prompt, submission);
      if ("problem" in intent) return inputOutcome(state, { prompt: state.prompt, plan: state.step }, intent.problem);
      const jar = deserializeJar(state.jar);
      const plan = state.step;
      if (credentialDomain !== undefined && intent.kind !== "nothing" && Object.keys(intent.values).length > 0) {
        checkCredentialHost(credentialDomain, plan.pageUrl);
      }
      const secrets: string[] = [];
      let request: { url: string } & PageRequest;
      if (intent.kind === "nothing") request = { url: plan.pageUrl };
      else if (intent.kind === "choice") {
        const choice = plan.choices.find((candidate) => candidate.id === intent.choiceId)!;
        state.requirements = addRequirement(state.requirements, choice.type === "sso_provider" ? null : "choice");
        if (choice.mfaType) state.chosenMfa = choice.mfaType;
        if (choice.provider) state.ssoProvider = choice.provider;
        if (choice.url !== undefined) request = { url: choice.url, referer: plan.pageUrl };
        else {
          // Values typed beside a choice go with it when the choice belongs to the same form.
          const values = choice.form === plan.fieldForm ? intent.values : {};
          recordFields(state, values, secrets, hostOf(new URL(plan.pageUrl)));
          request = { ...encodeForm(plan.forms[choice.form!]!, values, choice.pairs ?? [], false), referer: plan.pageUrl, credentialDomain };
        }
      } else {
        recordFields(state, intent.values, secrets, hostOf(new URL(plan.pageUrl)));
        request = { ...encodeForm(plan.forms[plan.fieldForm!]!, intent.values, [], true), referer: plan.pageUrl, credentialDomain };
      }
      const submitted = { url: request.url, jarBefore: state.jar };
      const { page, model } = await load(jar, target, request, state.history);
      state.jar = serializeJar(jar);
      const answeredPost = request.method === "POST" && page.visited.length === 1 && page.visited[0] === request.url;
      return afterSubmit(state, jar, page, model, intent.kind !== "nothing", secrets, submitted, () =>
        learnEvidence(target, jar, { page, model }, answeredPost, state.durableValues.identifier ? [state.durableValues.identifier] : []),
      );
    });
  }

  /**
   * What the health checks will look for: the landing page as two later visits with the session see
   * it, compared with the same page fetched without cookies.
   */
  async function learnEvidence(
    target: LoginTarget,
    jar: CookieJar,
    landed: Loaded,
    answeredPost: boolean,
    identifiers: string[],
  ): Promise<{ evidence: SessionEvidence; postLoginUrl: string }> {
    // The login has worked by now: a page that cannot be fetched leaves less to learn, never a failed login.
    const fetched = (cookies: CookieJar, url: string) =>
      load(cookies, target, { url }, []).catch((error: unknown) => {
        if (error instanceof RefusedRequestError || error instanceof UnreachableError) return null;
        throw error;
      });
    // The answer to a POST is not what a GET of its URL shows later: the checks GET it.
    const signedIn = answeredPost ? await fetched(jar, landed.page.url) : landed;
    const url = signedIn?.page.url ?? landed.page.url;
    const cookiesOf = (cookies: CookieJar) => cookies.getCookiesSync(url).map((cookie) => cookie.key);
    const afterFirst = cookiesOf(jar);
    // A second look, at login only, tells what stays from what changes per request (a count, a featured link, a one-shot cookie).
    const again = signedIn && (await fetched(jar, url));
    if (!signedIn || !again || signedIn.page.status >= 400 || again.page.status >= 400) return { evidence: unlearntEvidence(), postLoginUrl: url };
    const anonymousJar = emptyJar();
    const anonymous = await fetched(anonymousJar, url);
    const refused = anonymous !== null && refusalOf(anonymous.page, anonymous.model, url) !== null;
    const evidence = learnSessionEvidence({
      signedIn: [signedIn.model, again.model],
      // An error page without the session (a rate limit, an outage) is nothing to compare with.
      anonymous: anonymous && (refused || anonymous.page.status < 400) ? { model: anonymous.model, refused } : null,
      identifiers,
      sessionCookies: sessionCookieNames({ afterFirst, afterSecond: cookiesOf(jar), anonymous: cookiesOf(anonymousJar) }),
    });
    return { evidence, postLoginUrl: url };
  }

  async function probe(target: LoginTarget, session: StorageState, postLoginUrl: string, evidence: SessionEvidence | null): Promise<ProbeOutcome> {
    let page: Page;
    let model: PageModel | null = null;
    const jar = storageStateToJar(session);
    try {
      page = await web.fetchPage(jar, target, postLoginUrl);
      // Only a page that may navigate by itself is parsed for where it goes.
      if (navigatesByItself.test(page.body)) ({ page, model } = await load(jar, target, { url: page.url }, []));
    } catch (error) {
      if (error instanceof RefusedRequestError || error instanceof UnreachableError) return { state: "unreachable", reason: error.message };
      throw error;
    }
    const answered = page;
    return judgeProbe(
      {
        status: answered.status,
        retryAfter: answered.headers["retry-after"] !== undefined,
        requestedPath: pathOf(postLoginUrl),
        signedOutSign: async () => refusalOf(answered, model, postLoginUrl),
        deletedCookie: async (names) => deletedSessionCookie(jar, answered, postLoginUrl, names),
        model: async () => model ?? parsePage(answered.body, answered.url),
      },
      evidence,
    );
  }

  // Nothing outlives a step: the whole flow is in the state.
  async function release(): Promise<null> {
    return null;
  }

  return { start, submit, probe, release };
}

/** Why the page is what a visitor without a session gets (401/403, a login page, a password form), or null. */
export function refusalOf(page: Pick<Page, "status" | "url" | "body">, model: PageModel | null, requestedUrl: string): string | null {
  if (page.status === 401 || page.status === 403) return `the site answered HTTP ${page.status}`;
  if (page.url !== new URL(requestedUrl).href && isLoginUrl(page.url)) return `redirected to the login page ${new URL(page.url).pathname}`;
  // Most signed-in pages show no password input: no parse for them.
  if (passwordInput.test(page.body) && hasPasswordForm(model ?? parsePage(page.body, page.url))) return "the page asks for a password";
  return null;
}

/** A session cookie of `names` the answer deleted (or let expire); only an answer that set cookies or redirected can have. */
function deletedSessionCookie(jar: CookieJar, page: Page, postLoginUrl: string, names: readonly string[]): string | null {
  if (names.length === 0 || (page.visited.length === 1 && !page.headers["set-cookie"])) return null;
  const kept = new Set(jar.getCookiesSync(postLoginUrl).map((cookie) => cookie.key));
  return names.find((name) => !kept.has(name)) ?? null;
}

/** The login page: `loginUrl`, or the domain's home page, or a sign-in link on either. */
async function findLoginPage(target: LoginTarget, policy: ScopePolicy, load: (url: string) => Promise<Loaded>): Promise<LoginStep> {
  const entry = target.loginUrl ? await load(target.loginUrl) : await loadHomePage(target.domain, load);
  const entryStep = analyzeStep(entry.model, null);
  checkBlocked(entry, entryStep !== null);
  if (entryStep) return entryStep;
  for (const link of signInLinks(entry.model, target, policy).slice(0, 3)) {
    const linked = await load(link);
    const step = analyzeStep(linked.model, null);
    checkBlocked(linked, step !== null);
    if (step) return step;
  }
  const scripted = entry.model.forms.length === 0 && /<script\b/i.test(entry.page.body) ? " (the page may build its form with script, which this HTTP engine does not run)" : "";
  throw browserMayHelp(new FlowFailure("login_form_not_found", `no login form at ${pathOf(entry.page.url)} (HTTP ${entry.page.status}) nor behind a sign-in link on it${scripted}`));
}

/** The domain's home page: https, then plain http too for an IP literal or localhost, where local test sites run. */
export function homePageUrls(domain: string): string[] {
  const host = isIP(domain) === 6 ? `[${domain}]` : domain;
  const local = domain === "localhost" || isIP(domain) !== 0;
  return local ? [`https://${host}/`, `http://${host}/`] : [`https://${host}/`];
}

async function loadHomePage(domain: string, load: (url: string) => Promise<Loaded>): Promise<Loaded> {
  const [secure, plain] = homePageUrls(domain);
  try {
    return await load(secure!);
  } catch (error) {
    if (plain === undefined || !(error instanceof UnreachableError)) throw error;
    return load(plain);
  }
}

function signInLinks(model: PageModel, target: LoginTarget, policy: ScopePolicy): string[] {
  const scored = model.links
    .filter((link) => scopeRefusal(new URL(link.href), target, policy) === null && link.href !== model.url)
    .map((link) => ({ href: link.href, score: signInLinkRank(link) }))
    .filter((link) => link.score > 0)
    .sort((a, b) => b.score - a.score);
  return [...new Set(scored.map((link) => link.href))];
}

async function afterSubmit(
  state: FlowState,
  jar: CookieJar,
  page: Page,
  model: PageModel,
  answered: boolean,
  secrets: string[],
  submitted: { url: string; jarBefore: SerializedCookieJar },
  learn: () => Promise<{ evidence: SessionEvidence; postLoginUrl: string }>,
): Promise<StepOutcome> {
  const messages = siteMessages(model, secrets);
  const siteError = siteErrorOf(messages);
  const step = analyzeStep(model, state.chosenMfa);
  const shownAgain = step !== null && state.step.kind === "input" && step.plan.signature === state.step.signature;
  const shownBefore = new Set(state.formMessages);
  const answers = messages.filter((message) => !shownBefore.has(message.text));
  checkBlocked({ page, model }, shownAgain || (step ? asksToSignIn(step) : isLoginUrl(page.url)), answers);
  if (step) {
    showStep(state, step, answered && shownAgain, messages, siteError);
    return inputOutcome(state, step, siteError);
  }
  if (page.status >= 400) {
    throw new FlowFailure("internal_error", `the site refused the submitted step (HTTP ${page.status}${siteError ? `: ${siteError}` : ""})`);
  }
  if (siteError && isLoginUrl(page.url)) throw new FlowFailure("credentials_invalid", `the site stopped the login: ${siteError}`);
  const learnt = await learn();
  const session = jarToStorageState(jar, model.localStorage.length > 0 ? [{ origin: new URL(page.url).origin, localStorage: model.localStorage }] : []);
  // A session the submit started shows as a cookie it (or a page it led to) set or changed, or as a
  // move off the login pages; a token the page's script keeps shows as neither, and a cookie from
  // before the submit (a CSRF or analytics cookie of the login page) is no sign of one.
  const movedOn = page.url !== submitted.url && page.url !== state.step.pageUrl && !isLoginUrl(page.url);
  if (session.cookies.length === 0 || (!movedOn && !cookieSetSince(submitted.jarBefore, state.jar))) {
    throw browserMayHelp(new FlowFailure("internal_error", "the site showed no login step but set no new cookie, so there is no session to keep"));
  }
  return successOutcome(state, session, learnt, "http");
}

/** A flow's success: the session it captured, what the landing page taught, and what the flow gathered. */
export function successOutcome(
  state: StepProgress,
  session: StorageState,
  learnt: { postLoginUrl: string; evidence: SessionEvidence },
  engine: LoginEngineKind,
): Extract<StepOutcome, { kind: "success" }> {
  return {
    kind: "success",
    session,
    postLoginUrl: learnt.postLoginUrl,
    requirements: state.requirements,
    durableValues: state.durableValues,
    typedHosts: state.typedHosts ?? {},
    ssoProvider: state.ssoProvider,
    evidence: learnt.evidence,
    engine,
  };
}

/** True when `after` holds a live cookie that `before` did not, or with another value. */
function cookieSetSince(before: SerializedCookieJar, after: SerializedCookieJar): boolean {
  const cookiesOf = (jar: SerializedCookieJar) => jarToStorageState(deserializeJar(jar)).cookies;
  const identity = (cookie: StorageState["cookies"][number]) => `${cookie.domain};${cookie.path};${cookie.name}`;
  const earlier = new Map(cookiesOf(before).map((cookie) => [identity(cookie), cookie.value]));
  return cookiesOf(after).some((cookie) => earlier.get(identity(cookie)) !== cookie.value);
}

/**
 * Records what the submitted fields were, typed on a page of `host`: requirements, durable values
 * and where each was typed, and the secrets a site message must not echo.
 */
export function recordFields(
  state: Pick<FlowState, "step" | "durableValues" | "typedHosts" | "requirements" | "chosenMfa">,
  values: Record<string, string>,
  secrets: string[],
  host: string,
): void {
  for (const field of state.step.fields) {
    const value = values[field.id];
    if (!value) continue;
    if (isDurableFieldType(field.type)) {
      state.durableValues[field.ref] = value;
      state.typedHosts = { ...state.typedHosts, [field.ref]: host };
      state.requirements = addRequirement(state.requirements, field.type);
    } else if (field.type === "totp_code") state.requirements = addRequirement(state.requirements, "totp_code");
    else if (field.type === "code") {
      const channel = field.linkedMfaType ?? state.chosenMfa;
      const requirement = channel === "sms" || channel === "call" ? "sms_code" : channel === "email" ? "email_code" : "external";
      state.requirements = addRequirement(state.requirements, requirement);
    }
    if (field.type !== "identifier" && field.type !== "text") secrets.push(value);
  }
}

export function addRequirement(requirements: LoginRequirement[], requirement: LoginRequirement | null): LoginRequirement[] {
  return requirement === null || requirements.includes(requirement) ? requirements : [...requirements, requirement];
}

/**
 * Captchas and bot walls end a flow: an HTTP client cannot get past them. A rate limit ends it before
 * another attempt counts, looked for only where the site held the login back (`heldBack`: the login
 * form or the same step shown again) or refused it (4xx): a signed-in page may say "too many failed
 * attempts since your last visit" or "try again in a few minutes" of something else. `messages` are
 * the ones that answer a submission (not already on the page its form came from); a page no
 * submission led to has none, as its text is the site's standing policy ("Accounts are locked after
 * 5 failed attempts"): there only HTTP 429 or a 4xx's Retry-After tells a limit.
 */
export function checkBlocked(
  { page, model }: { page: Pick<Page, "status" | "headers" | "url">; model: PageModel },
  heldBack: boolean,
  messages: readonly SiteMessage[] = [],
  now = new Date(),
): void {
  if (model.captcha) throw new FlowFailure("captcha_blocked", `${pathOf(page.url)} asks to solve a captcha`);
  const limit = heldBack || (page.status >= 400 && page.status < 500) ? rateLimitOf({ status: page.status, headers: page.headers, messages: messages.map((message) => message.text) }, now) : null;
  if (limit) {
    const wait = limit.retryAfterSeconds === null ? "" : ` (retry after ${limit.retryAfterSeconds} s)`;
    throw new FlowFailure("rate_limited", `${hostOf(new URL(page.url))} limits login attempts${wait}${limit.message ? `: ${limit.message}` : ""}`, limit.retryAfterSeconds);
  }
  if ([403, 429, 503].includes(page.status) && botWallWords.test(`${model.title} ${model.text}`)) {
    throw new FlowFailure("bot_detected", `${hostOf(new URL(page.url))} answered HTTP ${page.status} with a bot check`);
  }
  if (page.status >= 500) throw new FlowFailure("site_unreachable", `${hostOf(new URL(page.url))} answered HTTP ${page.status}`);
}

/** A step that asks who the person is or their password: the login form, not a later step. */
export function asksToSignIn(step: LoginStep): boolean {
  return step.prompt.fields.some((field) => field.type === "identifier" || field.type === "password");
}

function inputOutcome(state: FlowState, step: LoginStep, websiteError: string | null): StepOutcome {
  return { kind: "input", state: state as unknown as EngineState, prompt: step.prompt, websiteError };
}

const refusalCodes: Record<RefusedRequestError["reason"], FlowErrorCode> = {
  out_of_scope: "unsupported_auth_method",
  forbidden_address: "site_unreachable",
  credential_domain: "credential_domain_mismatch",
};

/** A stored credential saved for `domain` is about to be typed on the page at `pageUrl`: refused outside that domain. */
export function checkCredentialHost(domain: string, pageUrl: string): void {
  const refusal = credentialHostRefusal(domain, new URL(pageUrl));
  if (refusal) throw new RefusedRequestError("credential_domain", refusal);
}

export async function outcomeOf(run: () => Promise<StepOutcome>): Promise<StepOutcome> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof FlowFailure) {
      return {
        kind: "failure",
        errorCode: error.errorCode,
        message: error.message,
        ...(error.retryAfterSeconds === null ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
        ...(error.browserMayHelp ? { browserMayHelp: true } : {}),
      };
    }
    if (error instanceof RefusedRequestError) {
      const errorCode = refusalCodes[error.reason];
      return { kind: "failure", errorCode, message: error.message };
    }
    if (error instanceof UnreachableError) return { kind: "failure", errorCode: "site_unreachable", message: error.message };
    // The name and the top frame only: a library's message may quote a cookie or a form value.
    log.error("login engine step failed", { error: error instanceof Error ? error.name : typeof error, at: topFrame(error) });
    return { kind: "failure", errorCode: "internal_error", message: "the login engine failed unexpectedly" };
  }
}

function topFrame(error: unknown): string | undefined {
  return error instanceof Error ? error.stack?.split("\n").find((line) => line.trim().startsWith("at "))?.trim() : undefined;
}

function readState(state: EngineState): FlowState {
  if (state.version !== 1 || typeof state.jar !== "object" || typeof state.step !== "object" || typeof state.prompt !== "object") {
    throw new FlowFailure("internal_error", "the flow's saved state is not one this engine wrote");
  }
  return structuredClone(state) as unknown as FlowState;
}

export function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.host}${parsed.pathname}`;
}
