import type { CookieJar, SerializedCookieJar } from "tough-cookie";
import type { StorageState } from "../archive/storage-state.ts";
import { log } from "../log.ts";
import { analyzeStep, hasPasswordForm, isLoginUrl, type FormPlan, type LoginStep, type StepPlan } from "./forms.ts";
import { createWebClient, RefusedRequestError, UnreachableError, type NetworkOptions, type Page, type PageRequest } from "./http.ts";
import { parsePage, type PageModel } from "./page.ts";
import { hostOf, scopeRefusal } from "./scope.ts";
import { deserializeJar, emptyJar, jarToStorageState, serializeJar, storageStateToJar } from "./session.ts";
import { readSubmission } from "./submission.ts";
import type {
  EngineState,
  FlowErrorCode,
  FlowPrompt,
  LoginEngine,
  LoginRequirement,
  LoginTarget,
  MfaType,
  ProbeOutcome,
  StepOutcome,
  Submission,
} from "./types.ts";

/** What the engine keeps between steps; plain JSON (the orchestrator encrypts it at rest). */
interface FlowState {
  version: 1;
  jar: SerializedCookieJar;
  prompt: FlowPrompt;
  step: StepPlan;
  /** Every URL requested so far, in order. */
  history: string[];
  chosenMfa: MfaType | null;
  /** Times in a row the site answered a submit with the same step again. */
  rejections: number;
  durableValues: Record<string, string>;
  requirements: LoginRequirement[];
  ssoProvider: string | null;
}

export type LoginEngineOptions = NetworkOptions;

const maxRejections = 3;
const signInLinkText = /^(sign ?in|log ?in|login|sign ?on|log ?on|my account|account)$/i;
const botWallWords = /just a moment|attention required|access denied|unusual traffic|automated (queries|requests|access)|are you a robot|request blocked/i;

class FlowFailure extends Error {
  readonly errorCode: FlowErrorCode;
  constructor(errorCode: FlowErrorCode, message: string) {
    super(message);
    this.errorCode = errorCode;
  }
}

export function createLoginEngine(options: LoginEngineOptions): LoginEngine {
  const web = createWebClient(options);

  async function start(target: LoginTarget): Promise<StepOutcome> {
    return outcomeOf(async () => {
      const jar = emptyJar();
      const history: string[] = [];
      const fetch = async (url: string) => {
        const page = await web.fetchPage(jar, target, url);
        history.push(...page.visited);
        return page;
      };
      const step = await findLoginPage(target, fetch);
      const state: FlowState = {
        version: 1,
        jar: serializeJar(jar),
        prompt: step.prompt,
        step: step.plan,
        history,
        chosenMfa: null,
        rejections: 0,
        durableValues: {},
        requirements: [],
        ssoProvider: null,
      };
      return inputOutcome(state, step, null);
    });
  }

  async function submit(target: LoginTarget, engineState: EngineState, submission: Submission): Promise<StepOutcome> {
    return outcomeOf(async () => {
      const state = readState(engineState);
      const intent = readSubmission(state.prompt, submission);
      if ("problem" in intent) return inputOutcome(state, { prompt: state.prompt, plan: state.step }, intent.problem);
      const jar = deserializeJar(state.jar);
      const plan = state.step;
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
          const values = choice.form === plan.fieldForm ? recordFields(state, intent.values, secrets) : {};
          request = formRequest(plan.forms[choice.form!]!, values, choice.pairs ?? [], false, plan.pageUrl);
        }
      } else {
        const values = recordFields(state, intent.values, secrets);
        request = formRequest(plan.forms[plan.fieldForm!]!, values, [], true, plan.pageUrl);
      }
      const page = await web.fetchPage(jar, target, request.url, request);
      state.history.push(...page.visited);
      state.jar = serializeJar(jar);
      return afterSubmit(state, jar, page, parsePage(page.body, page.url), intent.kind !== "nothing", secrets);
    });
  }

  async function probe(target: LoginTarget, session: StorageState, postLoginUrl: string): Promise<ProbeOutcome> {
    let page: Page;
    try {
      page = await web.fetchPage(storageStateToJar(session), target, postLoginUrl);
    } catch (error) {
      if (error instanceof RefusedRequestError || error instanceof UnreachableError) return { state: "unreachable", reason: error.message };
      throw error;
    }
    if (page.status >= 500) return { state: "unreachable", reason: `the site answered HTTP ${page.status}` };
    if (page.status === 401 || page.status === 403) return { state: "logged_out", reason: `the site answered HTTP ${page.status}` };
    if (page.url !== postLoginUrl && isLoginUrl(page.url)) {
      return { state: "logged_out", reason: `redirected to the login page ${new URL(page.url).pathname}` };
    }
    // Most signed-in pages have no password input at all: skip the parse for them.
    if (/type\s*=\s*["']?password/i.test(page.body) && hasPasswordForm(parsePage(page.body, page.url))) {
      return { state: "logged_out", reason: "the page asks for a password" };
    }
    return { state: "logged_in" };
  }

  return { start, submit, probe };
}

/** The login page: `loginUrl`, or the domain's home page, or a sign-in link on either. */
async function findLoginPage(target: LoginTarget, fetch: (url: string) => Promise<Page>): Promise<LoginStep> {
  const entry = target.loginUrl ? await fetch(target.loginUrl) : await fetchHomePage(target.domain, fetch);
  const entryModel = parsePage(entry.body, entry.url);
  checkBlocked(entry, entryModel);
  const entryStep = analyzeStep(entryModel, null);
  if (entryStep) return entryStep;
  for (const link of signInLinks(entryModel, target).slice(0, 3)) {
    const page = await fetch(link);
    const model = parsePage(page.body, page.url);
    checkBlocked(page, model);
    const step = analyzeStep(model, null);
    if (step) return step;
  }
  throw new FlowFailure("login_form_not_found", `no login form at ${pathOf(entry.url)} (HTTP ${entry.status}) nor behind a sign-in link on it`);
}

/** https first; plain http too for an IP literal or localhost, where local test sites run. */
async function fetchHomePage(domain: string, fetch: (url: string) => Promise<Page>): Promise<Page> {
  const local = domain === "localhost" || /^[\d.]+$|:/.test(domain);
  try {
    return await fetch(`https://${domain.includes(":") ? `[${domain}]` : domain}/`);
  } catch (error) {
    if (!local || !(error instanceof UnreachableError)) throw error;
    return fetch(`http://${domain.includes(":") ? `[${domain}]` : domain}/`);
  }
}

function signInLinks(model: PageModel, target: LoginTarget): string[] {
  const scored = model.links
    .filter((link) => scopeRefusal(new URL(link.href), target) === null && link.href !== model.url)
    .map((link) => ({ href: link.href, score: (signInLinkText.test(link.text) ? 2 : 0) + (isLoginUrl(link.href) ? 1 : 0) }))
    .filter((link) => link.score > 0)
    .sort((a, b) => b.score - a.score);
  return [...new Set(scored.map((link) => link.href))];
}

function afterSubmit(state: FlowState, jar: CookieJar, page: Page, model: PageModel, answered: boolean, secrets: string[]): StepOutcome {
  checkBlocked(page, model);
  const siteError = redact(model.errorText, secrets);
  const step = analyzeStep(model, state.chosenMfa);
  if (step) {
    const sameStep = answered && state.step.kind === "input" && step.plan.signature === state.step.signature;
    state.rejections = sameStep ? state.rejections + 1 : 0;
    if (state.rejections >= maxRejections) {
      throw new FlowFailure("credentials_invalid", `the site rejected ${maxRejections} attempts in a row${siteError ? `: ${siteError}` : ""}`);
    }
    state.prompt = step.prompt;
    state.step = step.plan;
    return inputOutcome(state, step, siteError);
  }
  if (page.status >= 400) {
    throw new FlowFailure("internal_error", `the site refused the submitted step (HTTP ${page.status}${siteError ? `: ${siteError}` : ""})`);
  }
  if (siteError && isLoginUrl(page.url)) throw new FlowFailure("credentials_invalid", `the site stopped the login: ${siteError}`);
  const session = jarToStorageState(jar, model.localStorage.length > 0 ? [{ origin: new URL(page.url).origin, localStorage: model.localStorage }] : []);
  if (session.cookies.length === 0) throw new FlowFailure("internal_error", "the site showed no login step but set no cookie, so there is no session to keep");
  return {
    kind: "success",
    session,
    postLoginUrl: page.url,
    requirements: state.requirements,
    durableValues: state.durableValues,
    ssoProvider: state.ssoProvider,
  };
}

/** Records what the submitted fields were (requirements, durable values) and returns them by field id. */
function recordFields(state: FlowState, values: Record<string, string>, secrets: string[]): Record<string, string> {
  for (const field of state.step.fields) {
    const value = values[field.id];
    if (!value) continue;
    if (field.type === "identifier" || field.type === "password" || field.type === "text") {
      state.durableValues[field.ref] = value;
      state.requirements = addRequirement(state.requirements, field.type);
    } else if (field.type === "totp_code") state.requirements = addRequirement(state.requirements, "totp_code");
    else if (field.type === "code") {
      const channel = field.linkedMfaType ?? state.chosenMfa;
      const requirement = channel === "sms" || channel === "call" ? "sms_code" : channel === "email" ? "email_code" : "external";
      state.requirements = addRequirement(state.requirements, requirement);
    }
    if (field.type !== "identifier" && field.type !== "text") secrets.push(value);
  }
  return values;
}

function addRequirement(requirements: LoginRequirement[], requirement: LoginRequirement | null): LoginRequirement[] {
  return requirement === null || requirements.includes(requirement) ? requirements : [...requirements, requirement];
}

function formRequest(form: FormPlan, values: Record<string, string>, pairs: Array<[string, string]>, withSubmitter: boolean, referer: string) {
  const params = new URLSearchParams();
  for (const entry of form.entries) params.append(entry.name, "field" in entry ? (values[entry.field] ?? "") : entry.value);
  for (const [name, value] of pairs) params.append(name, value);
  if (withSubmitter && form.submitter) params.append(...form.submitter);
  if (form.method === "POST") return { url: form.action, method: "POST" as const, body: params.toString(), referer };
  const url = new URL(form.action);
  url.search = params.toString();
  return { url: url.href, referer };
}

/** Captchas and bot walls end a flow: an HTTP client cannot get past them. */
function checkBlocked(page: Page, model: PageModel): void {
  if (model.captcha) throw new FlowFailure("captcha_blocked", `${pathOf(page.url)} asks to solve a captcha`);
  if ([403, 429, 503].includes(page.status) && botWallWords.test(`${model.title} ${model.text}`)) {
    throw new FlowFailure("bot_detected", `${hostOf(new URL(page.url))} answered HTTP ${page.status} with a bot check`);
  }
  if (page.status >= 500) throw new FlowFailure("site_unreachable", `${hostOf(new URL(page.url))} answered HTTP ${page.status}`);
}

function inputOutcome(state: FlowState, step: LoginStep, websiteError: string | null): StepOutcome {
  return { kind: "input", state: state as unknown as EngineState, prompt: step.prompt, websiteError };
}

async function outcomeOf(run: () => Promise<StepOutcome>): Promise<StepOutcome> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof FlowFailure) return { kind: "failure", errorCode: error.errorCode, message: error.message };
    if (error instanceof RefusedRequestError) {
      const errorCode = error.reason === "out_of_scope" ? "unsupported_auth_method" : "site_unreachable";
      return { kind: "failure", errorCode, message: error.message };
    }
    if (error instanceof UnreachableError) return { kind: "failure", errorCode: "site_unreachable", message: error.message };
    log.error("login engine step failed", { error: error instanceof Error ? error.message : String(error) });
    return { kind: "failure", errorCode: "internal_error", message: "the login engine failed unexpectedly" };
  }
}

function readState(state: EngineState): FlowState {
  if (state.version !== 1 || typeof state.jar !== "object" || typeof state.step !== "object" || typeof state.prompt !== "object") {
    throw new FlowFailure("internal_error", "the flow's saved state is not one this engine wrote");
  }
  return structuredClone(state) as unknown as FlowState;
}

/** The site's message, without any secret just typed in case the site echoes it. */
function redact(text: string | null, secrets: string[]): string | null {
  if (text === null) return null;
  return secrets.filter((secret) => secret.length >= 3).reduce((redacted, secret) => redacted.split(secret).join("[redacted]"), text).slice(0, 300);
}

function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.host}${parsed.pathname}`;
}
