import type { IncomingHttpHeaders } from "node:http";
import { isIP } from "node:net";
import type { StorageState } from "../archive/storage-state.ts";
import { log } from "../log.ts";
import { hasPasswordForm, isInterstitial, isLoginUrl, type LoginStep, type StepPlan } from "./forms.ts";
import { parsePage, type PageModel } from "./page.ts";
import { rateLimitOf } from "./rate-limit.ts";
import { credentialHostRefusal, hostOf } from "../policy/scope.ts";
import type { SiteMessage } from "./site-message.ts";
import { isDurableFieldType } from "./submission.ts";
import type { FlowErrorCode, FlowPrompt, LoginEngineKind, LoginRequirement, MfaType, SessionEvidence, StepOutcome } from "./types.ts";

/**
 * What both login engines share, whatever drives the page (plain requests in http/, a Chromium in
 * browser/): where a flow stands between steps, how a step is shown and counted, how a site's answer
 * ends a flow (blocks, refusals), and the failures every step is turned into an outcome from. An
 * engine implements the `LoginEngine` port (types.ts) on top of it; nothing here knows which one runs.
 */

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

const maxRejections = 3;
const passwordInput = /type\s*=\s*["']?password/i;
const botWallWords = /just a moment|attention required|access denied|unusual traffic|automated (queries|requests|access)|are you a robot|request blocked/i;

/** Ends a step with the failure outcome of `errorCode`; `cause` is what the engine met, when it wraps an error. */
export class FlowFailure extends Error {
  readonly errorCode: FlowErrorCode;
  readonly retryAfterSeconds: number | null;
  browserMayHelp = false;
  constructor(errorCode: FlowErrorCode, message: string, options: { retryAfterSeconds?: number | null; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "FlowFailure";
    this.errorCode = errorCode;
    this.retryAfterSeconds = options.retryAfterSeconds ?? null;
  }
}

/** Why the page is what a visitor without a session gets (401/403, a login page, a password form), or null. */
export function refusalOf(page: { status: number; url: string; body: string }, model: PageModel | null, requestedUrl: string): string | null {
  if (page.status === 401 || page.status === 403) return `the site answered HTTP ${page.status}`;
  if (page.url !== new URL(requestedUrl).href && isLoginUrl(page.url)) return `redirected to the login page ${new URL(page.url).pathname}`;
  // Most signed-in pages show no password input: no parse for them.
  if (passwordInput.test(page.body) && hasPasswordForm(model ?? parsePage(page.body, page.url))) return "the page asks for a password";
  return null;
}

/** The domain's home page: https, then plain http too for an IP literal or localhost, where local test sites run. */
export function homePageUrls(domain: string): string[] {
  const host = isIP(domain) === 6 ? `[${domain}]` : domain;
  const local = domain === "localhost" || isIP(domain) !== 0;
  return local ? [`https://${host}/`, `http://${host}/`] : [`https://${host}/`];
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
    evidence: { ...learnt.evidence, engine },
    engine,
  };
}

/**
 * Records what the submitted fields were, typed on a page of `host`: requirements, durable values
 * and where each was typed, and the secrets a site message must not echo. `totpCodeFields` are code
 * boxes that did not say their channel and were answered with the current code of the linked
 * credential's TOTP secret (StepOptions): a TOTP code, which a re-auth answers from that secret again.
 */
export function recordFields(
  state: Pick<StepProgress, "step" | "durableValues" | "typedHosts" | "requirements" | "chosenMfa">,
  values: Record<string, string>,
  secrets: string[],
  host: string,
  totpCodeFields: readonly string[] = [],
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
      const channel = totpCodeFields.includes(field.id) ? "totp" : (field.linkedMfaType ?? state.chosenMfa);
      const requirement =
        channel === "totp" ? "totp_code" : channel === "sms" || channel === "call" ? "sms_code" : channel === "email" ? "email_code" : "external";
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
  { page, model }: { page: { status: number; headers: IncomingHttpHeaders; url: string }; model: PageModel },
  heldBack: boolean,
  messages: readonly SiteMessage[] = [],
  now = new Date(),
): void {
  if (model.captcha) throw new FlowFailure("captcha_blocked", `${pathOf(page.url)} asks to solve a captcha`);
  const limit = heldBack || (page.status >= 400 && page.status < 500) ? rateLimitOf({ status: page.status, headers: page.headers, messages: messages.map((message) => message.text) }, now) : null;
  if (limit) {
    const wait = limit.retryAfterSeconds === null ? "" : ` (retry after ${limit.retryAfterSeconds} s)`;
    throw new FlowFailure("rate_limited", `${hostOf(new URL(page.url))} limits login attempts${wait}${limit.message ? `: ${limit.message}` : ""}`, { retryAfterSeconds: limit.retryAfterSeconds });
  }
  if ([403, 429, 503].includes(page.status) && botWallWords.test(`${model.title} ${model.text}`)) {
    throw new FlowFailure("bot_detected", `${hostOf(new URL(page.url))} answered HTTP ${page.status} with a bot check`);
  }
  if (page.status >= 500) throw new FlowFailure("site_unreachable", `${hostOf(new URL(page.url))} answered HTTP ${page.status}`);
}

/**
 * Whether the step a page shows after `answered` was submitted is the login's next one. A step that
 * asks nothing a login asks (`asksLogin`: a signed-in page's filter or note box, on a page whose text
 * mentions "login") is one only while the login form is still there (the answered step shown again)
 * or the submit has started no session: `sessionStarted` is asked only then.
 */
export async function isNextLoginStep(step: LoginStep, answered: StepPlan, sessionStarted: () => boolean | Promise<boolean>): Promise<boolean> {
  return step.asksLogin || isSameStep(step, answered) || !(await sessionStarted());
}

/** The step just answered, shown again: a rejection, or a page still at work. */
export function isSameStep(step: LoginStep, answered: StepPlan): boolean {
  return answered.kind === "input" && step.plan.signature === answered.signature;
}

/**
 * Why the page a login ended on does not show that the session works, or null. A page with no sign
 * of a session (no sign-out control, nothing the evidence learnt as signed in) that shows nothing of
 * the app (a challenge drawn on a canvas, "checking your browser") is not the app, however many
 * cookies the submit set: a success there would be a connection that says it is logged in and is not.
 */
export function unprovenSession(page: PageModel, evidence: SessionEvidence): string | null {
  if (page.hasSignOut || evidence.signedIn.length > 0 || !isInterstitial(page)) return null;
  const drawn = page.drawsOnCanvas ? ", drawn on a canvas" : "";
  return `after the submit the site showed ${pathOf(page.url)}, which is neither a login step nor a signed-in page (a challenge or interstitial${drawn}, with no sign of a session)`;
}

/** A step that asks who the person is or their password: the login form, not a later step. */
export function asksToSignIn(step: LoginStep): boolean {
  return step.prompt.fields.some((field) => field.type === "identifier" || field.type === "password");
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

export function pathOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.host}${parsed.pathname}`;
}

/**
 * The engine would not send this request: its host is out of scope, resolves to a forbidden address,
 * or is outside the domain of the stored credential the request carries.
 */
export class RefusedRequestError extends Error {
  readonly reason: "out_of_scope" | "forbidden_address" | "credential_domain";
  constructor(reason: RefusedRequestError["reason"], message: string) {
    super(message);
    this.name = "RefusedRequestError";
    this.reason = reason;
  }
}

/** The site could not be asked: DNS, connection, TLS, timeout, or a redirect loop. */
export class UnreachableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UnreachableError";
  }
}
