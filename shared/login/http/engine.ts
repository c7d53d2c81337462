import type { CookieJar, SerializedCookieJar } from "tough-cookie";
import type { StorageState } from "../../archive/storage-state.ts";
import type { Deadline } from "../../deadline.ts";
import { analyzeStep, automaticRequest, encodeForm, isLoginUrl, signInLinkRank, type LoginStep } from "../forms.ts";
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
  UnreachableError,
  unprovenSession,
  type StepProgress,
} from "../kernel.ts";
import { basicAuthorization, basicAuthStep, basicChallengeOf, basicPasswordField, basicRejectionMessages, basicUserField, unkeptBasicSession } from "../http-auth.ts";
import { parsePage, type PageModel } from "../page.ts";
import { judgeProbe, withSessionLeft } from "../probe-verdict.ts";
import { hostOf, scopeRefusal, type TargetPolicy } from "../../policy/scope.ts";
import { siteErrorOf, siteMessages } from "../site-message.ts";
import { deserializeJar, emptyJar, jarToStorageState, serializeJar, storageStateToJar } from "../session.ts";
import { learnSessionEvidence, sessionCookieNames, unlearntEvidence } from "../session-evidence.ts";
import { readSubmission } from "../submission.ts";
import type { EngineState, LoginEngine, MfaType, LoginTarget, ProbeOutcome, SessionEvidence, StepOptions, StepOutcome, Submission } from "../types.ts";
import { createWebClient, type NetworkOptions, type Page, type PageRequest } from "./client.ts";

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

const maxAutomaticHops = 5;
const navigatesByItself = /http-equiv\s*=\s*["']?refresh|\.submit\(\s*\)/i;

/** A failure where a browser, which runs the page's script, may still find or finish the login. */
function browserMayHelp(failure: FlowFailure): FlowFailure {
  failure.browserMayHelp = true;
  return failure;
}

export function createLoginEngine(options: LoginEngineOptions): LoginEngine {
  const web = createWebClient(options);

  /**
   * Requests a page, then goes where the page sends a browser by itself (meta refresh, auto-submitted
   * hand-off form), each request within the first one's deadline.
   */
  async function load(jar: CookieJar, target: LoginTarget, request: PageRequest & { url: string }, history: string[]): Promise<Loaded> {
    let page = await web.fetchPage(jar, target, request.url, request);
    history.push(...page.visited);
    let model = parsePage(page.body, page.url);
    for (let hop = 0; hop < maxAutomaticHops; hop++) {
      const next = automaticRequest(model);
      if (!next) break;
      page = await web.fetchPage(jar, target, next.url, { ...next, referer: page.url, deadline: request.deadline });
      history.push(...page.visited);
      model = parsePage(page.body, page.url);
    }
    return { page, model };
  }

  async function start(target: LoginTarget, deadline?: Deadline): Promise<StepOutcome> {
    return outcomeOf(async () => {
      const jar = emptyJar();
      const history: string[] = [];
      // The search stops at the page whose form it found: the last one loaded.
      let formPage: Loaded | undefined;
      const step = await findLoginPage(target, options, async (url) => (formPage = await load(jar, target, { url, deadline }, history)));
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

  async function submit(target: LoginTarget, engineState: EngineState, submission: Submission, { credentialDomain, deadline, totpCodeFields }: StepOptions = {}): Promise<StepOutcome> {
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
      if (plan.basicAuth && intent.kind === "fields") {
        const answer = basicAuthorization(intent.values[basicUserField] ?? "", intent.values[basicPasswordField] ?? "");
        if ("problem" in answer) return inputOutcome(state, { prompt: state.prompt, plan }, answer.problem);
        recordFields(state, intent.values, secrets, hostOf(new URL(plan.pageUrl)), totpCodeFields);
        request = { url: plan.pageUrl, authorization: answer.authorization, credentialDomain };
      } else if (intent.kind === "nothing") request = { url: plan.pageUrl };
      else if (intent.kind === "choice") {
        const choice = plan.choices.find((candidate) => candidate.id === intent.choiceId)!;
        state.requirements = addRequirement(state.requirements, choice.type === "sso_provider" ? null : "choice");
        if (choice.mfaType) state.chosenMfa = choice.mfaType;
        if (choice.provider) state.ssoProvider = choice.provider;
        if (choice.url !== undefined) request = { url: choice.url, referer: plan.pageUrl };
        else if (choice.form === undefined) {
          throw browserMayHelp(new FlowFailure("unsupported_auth_method", `"${choice.label}" on ${pathOf(plan.pageUrl)} is pressed through the page's script, which only a browser runs`));
        } else {
          // Values typed beside a choice go with it when the choice belongs to the same form.
          const values = choice.form === plan.fieldForm ? intent.values : {};
          recordFields(state, values, secrets, hostOf(new URL(plan.pageUrl)), totpCodeFields);
          request = { ...encodeForm(plan.forms[choice.form!]!, values, choice.pairs ?? [], false), referer: plan.pageUrl, credentialDomain };
        }
      } else {
        recordFields(state, intent.values, secrets, hostOf(new URL(plan.pageUrl)), totpCodeFields);
        request = { ...encodeForm(plan.forms[plan.fieldForm!]!, intent.values, [], true), referer: plan.pageUrl, credentialDomain };
      }
      const submitted = { url: request.url, jarBefore: state.jar };
      const { page, model } = await load(jar, target, { ...request, deadline }, state.history);
      state.jar = serializeJar(jar);
      const answeredPost = request.method === "POST" && page.visited.length === 1 && page.visited[0] === request.url;
      const identifiers = state.durableValues.identifier ? [state.durableValues.identifier] : [];
      return afterSubmit(state, jar, page, model, intent.kind !== "nothing", secrets, submitted, async () => {
        if (!plan.basicAuth) return learnEvidence(target, jar, { page, model }, answeredPost, identifiers);
        // Checks and the saved profile hold cookies, never the password: the session is what the site
        // keeps without the header, shown by the same page asked for with the cookies alone.
        if (!cookieSetSince(submitted.jarBefore, serializeJar(jar))) throw unkeptBasicSession(page.url, null);
        const withCookies = await load(jar, target, { url: page.url }, []);
        const refusal = refusalOf(withCookies.page, withCookies.model, page.url);
        if (refusal) throw unkeptBasicSession(page.url, refusal);
        return learnEvidence(target, jar, withCookies, false, identifiers);
      });
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
    // The login has worked by now: a page that cannot be fetched leaves less to learn, never a failed
    // login. So the step's deadline no longer applies: a login near it still learns its evidence.
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
    // Only a check whose answers set cookies can have renewed the session.
    let setCookies = false;
    try {
      page = await web.fetchPage(jar, target, postLoginUrl);
      // Only a page that may navigate by itself is parsed for where it goes.
      if (navigatesByItself.test(page.body)) {
        setCookies ||= mayHaveSetCookies(page);
        ({ page, model } = await load(jar, target, { url: page.url }, []));
      }
    } catch (error) {
      if (error instanceof RefusedRequestError || error instanceof UnreachableError) return { state: "unreachable", reason: error.message };
      throw error;
    }
    const answered = page;
    const parsed = () => (model ??= parsePage(answered.body, answered.url));
    const verdict = await judgeProbe(
      {
        status: answered.status,
        retryAfter: answered.headers["retry-after"] !== undefined,
        requestedPath: pathOf(postLoginUrl),
        signedOutSign: async () => refusalOf(answered, model, postLoginUrl),
        deletedCookie: async (names) => deletedSessionCookie(jar, answered, postLoginUrl, names),
        model: async () => parsed(),
        engine: "http",
        // A check knows no identifier: what it learns is the page's own signs, not the account's name.
        learn: async () => (await learnEvidence(target, jar, { page: answered, model: parsed() }, false, [])).evidence,
      },
      evidence,
    );
    setCookies ||= mayHaveSetCookies(answered);
    return setCookies ? withSessionLeft(verdict, async () => jarToStorageState(jar, session.origins)) : verdict;
  }

  // Nothing outlives a step: the whole flow is in the state.
  async function release(): Promise<null> {
    return null;
  }

  return { start, submit, probe, release };
}

/** Whether the answer, or a redirect on its way, may have set cookies. */
function mayHaveSetCookies(page: Page): boolean {
  return page.visited.length > 1 || page.headers["set-cookie"] !== undefined;
}

/** A session cookie of `names` the answer deleted (or let expire); only an answer that set cookies or redirected can have. */
function deletedSessionCookie(jar: CookieJar, page: Page, postLoginUrl: string, names: readonly string[]): string | null {
  if (names.length === 0 || !mayHaveSetCookies(page)) return null;
  const kept = new Set(jar.getCookiesSync(postLoginUrl).map((cookie) => cookie.key));
  return names.find((name) => !kept.has(name)) ?? null;
}

/** The login page: `loginUrl`, or the domain's home page, or a sign-in link on either. */
async function findLoginPage(target: LoginTarget, policy: TargetPolicy, load: (url: string) => Promise<Loaded>): Promise<LoginStep> {
  const entry = target.loginUrl ? await load(target.loginUrl) : await loadHomePage(target.domain, load);
  const entryStep = stepOf(entry, null);
  checkBlocked(entry, entryStep !== null);
  if (entryStep) return entryStep;
  for (const link of signInLinks(entry.model, target, policy).slice(0, 3)) {
    const linked = await load(link);
    const step = stepOf(linked, null);
    checkBlocked(linked, step !== null);
    if (step) return step;
  }
  const scripted = entry.model.forms.length === 0 && /<script\b/i.test(entry.page.body) ? " (the page may build its form with script, which this HTTP engine does not run)" : "";
  throw browserMayHelp(new FlowFailure("login_form_not_found", `no login form at ${pathOf(entry.page.url)} (HTTP ${entry.page.status}) nor behind a sign-in link on it${scripted}`));
}

/** The login step a loaded page asks: an HTTP Basic challenge, or what its HTML shows. */
function stepOf({ page, model }: Loaded, chosenMfa: MfaType | null): LoginStep | null {
  const challenge = basicChallengeOf(page);
  return challenge ? basicAuthStep(page.url, challenge) : analyzeStep(model, chosenMfa);
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

function signInLinks(model: PageModel, target: LoginTarget, policy: TargetPolicy): string[] {
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
  const shown = stepOf({ page, model }, state.chosenMfa);
  const step = shown && (await isNextLoginStep(shown, state.step, () => cookieSetSince(submitted.jarBefore, state.jar))) ? shown : null;
  const shownAgain = step !== null && isSameStep(step, state.step);
  const shownBefore = new Set(state.formMessages);
  const answers = messages.filter((message) => !shownBefore.has(message.text));
  const heard = shownAgain && step.plan.basicAuth ? basicRejectionMessages(messages, shownBefore) : { said: messages, standing: messages };
  const siteError = siteErrorOf(heard.said);
  checkBlocked({ page, model }, shownAgain || (step ? asksToSignIn(step) : isLoginUrl(page.url)), answers);
  if (step) {
    showStep(state, step, answered && shownAgain, heard.standing, siteError);
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
  // A challenge that a page's script answers (a browser check) may let a browser through.
  const unproven = unprovenSession(model, learnt.evidence);
  if (unproven) throw browserMayHelp(new FlowFailure("unsupported_auth_method", unproven));
  return successOutcome(state, session, learnt, "http");
}

/** True when `after` holds a live cookie that `before` did not, or with another value. */
function cookieSetSince(before: SerializedCookieJar, after: SerializedCookieJar): boolean {
  const cookiesOf = (jar: SerializedCookieJar) => jarToStorageState(deserializeJar(jar)).cookies;
  const identity = (cookie: StorageState["cookies"][number]) => `${cookie.domain};${cookie.path};${cookie.name}`;
  const earlier = new Map(cookiesOf(before).map((cookie) => [identity(cookie), cookie.value]));
  return cookiesOf(after).some((cookie) => earlier.get(identity(cookie)) !== cookie.value);
}

function inputOutcome(state: FlowState, step: Pick<LoginStep, "prompt" | "plan">, websiteError: string | null): StepOutcome {
  return { kind: "input", state: state as unknown as EngineState, prompt: step.prompt, websiteError };
}

function readState(engineState: EngineState): FlowState {
  const state = engineState as Record<string, unknown>;
  if (state.version !== 1 || typeof state.jar !== "object" || typeof state.step !== "object" || typeof state.prompt !== "object") {
    throw new FlowFailure("internal_error", "the flow's saved state is not one this engine wrote");
  }
  return structuredClone(state) as unknown as FlowState;
}

