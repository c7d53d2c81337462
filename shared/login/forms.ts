import {
  accountLinkOptions,
  buttonFormOptions,
  choiceGroupsOf,
  isSignOutForm,
  isSubmit,
  mfaTarget,
  primarySubmit,
  ssoChoices,
  typeChoices,
  type FoundChoice,
} from "./choices.ts";
import { classifyFields, isFillable, isRememberMe, toCanonicalField, toDiscoveredField, type CanonicalType, type ClassifiedField } from "./fields.ts";
import type { Form, PageModel } from "./page.ts";
import type { FlowPrompt, MfaType } from "./types.ts";

/**
 * What a login page asks (the prompt shown to a person) and how to answer it (the plan the engine
 * keeps in its state: plain JSON, so the next step can run anywhere).
 */

export type FormEntry = { name: string; value: string } | { name: string; field: string };

export interface FormPlan {
  action: string;
  method: "GET" | "POST";
  /** Every control a browser would send, in order: fixed values (CSRF tokens) and slots for the asked fields. */
  entries: FormEntry[];
  /** The button a person presses after typing: sent with the fields, as a browser sends its submitter. */
  submitter: [string, string] | null;
}

export interface PlannedField {
  id: string;
  name: string;
  ref: string;
  type: CanonicalType;
  linkedMfaType: MfaType | null;
  required: boolean;
}

export interface PlannedChoice {
  id: string;
  type: FoundChoice["type"];
  label: string;
  mfaType: MfaType | null;
  provider: string | null;
  selector: string;
  /** Submit `forms[form]` with `pairs` added, or follow `url`; neither: only the page's script acts on it, in a browser. */
  form?: number;
  pairs?: Array<[string, string]>;
  url?: string;
}

export interface StepPlan {
  /** `external`: nothing to fill in; the person acts elsewhere (approves a push, opens a link) and the page is asked again. */
  kind: "input" | "external";
  pageUrl: string;
  forms: FormPlan[];
  /** The form the fields belong to. */
  fieldForm: number | null;
  fields: PlannedField[];
  choices: PlannedChoice[];
  /** Equal for the same form shown again (a rejected password comes back to it). */
  signature: string;
  /** The step is an HTTP Basic challenge (http-auth.ts), answered with an `Authorization` header rather than a form. */
  basicAuth?: { realm: string | null };
}

export interface LoginStep {
  prompt: FlowPrompt;
  plan: StepPlan;
  /**
   * The step asks what only a login asks: a secret or a code, a choice (an account, a method, a
   * provider), an action elsewhere, or an identifier or other value in a form that offers to sign in
   * or continue. A box on a signed-in page (a filter, a note) asks none of these, nor does the app's
   * own form (`asksMoreThanLogin`), whatever secret or options it also asks.
   */
  asksLogin: boolean;
}

/** Who the person is, and at most a workspace or tenant and a second name (a company id, a branch): a login step asks no more. */
const loginTextFieldsAtMost = 3;
const loginPath = /(^|[/_-])(log-?in|sign-?in|sign_in|logon|authorize|auth|sso|session|verify|mfa|2fa|otp|challenge)([/_.-]|$)/i;
const signInWords = /\b(sign in|log in|login|verify|verification|two-factor|2-step|authenticat\w*|choose an account|select an account)\b/i;
const signInLinkWords =
  /^(?:sign ?in|log ?in|login|sign ?on|log ?on|anmelden|einloggen|connexion|se connecter|iniciar sesi[óo]n|entrar|accedi|inloggen|aanmelden|zaloguj(?: się)?|logga in|kirjaudu(?: sisään)?|přihlásit(?: se)?|войти|ログイン|登录|登入)(?: (?:to|with) .{1,40})?$/i;
/** "My account" and its kin: where a visitor without a session is usually asked to sign in, though a signed-in page links it too. */
const accountLinkWords = /^(?:my )?account$|^(?:mein )?konto$|^mon compte$|^mi cuenta$|^il mio account$|^mijn account$|^moje konto$|^mitt konto$/i;
const formPurpose = /log-?in|sign-?in|session|auth|verify|otp|mfa|2fa/;
const otherPurpose = /search|newsletter|subscribe|register|sign-?up|contact|comment|feedback/;
const externalWords =
  /check your (email|inbox|phone)|we('ve| have)? sent (you )?(a|an) (link|notification|push|request)|approve (the|this) (sign-?in|request|login)|open the [\w ]{1,30} app to (approve|confirm)|waiting for (approval|confirmation)/i;
const instructionWords = /\b(code|sent|authenticator|text message)\b/i;
/** A button that sends a login's step: it signs in or goes on to the next step. */
const proceedWords =
  /^(?:sign ?in|log ?in|login|sign ?on|log ?on|continue|next|verify|confirm|proceed|anmelden|einloggen|weiter|fortfahren|connexion|se connecter|suivant|continuer|iniciar sesi[óo]n|entrar|siguiente|continuar|accedi|avanti|continua|inloggen|aanmelden|volgende|doorgaan|zaloguj(?: się)?|dalej|logga in|nästa|войти|далее|продолжить|ログイン|次へ|登录|下一步|继续)(?:\s.*)?$/i;
/** What a page between a login and the app says while it checks the visitor. */
const interstitialWords =
  /security check|checking (?:your|the) browser|browser (?:check|verification)|verify(?:ing)? (?:that )?you are (?:a )?human|are you (?:a )?(?:robot|human)|just a moment|one more step|ddos protection|bot protection|before you continue/i;
/** At most this much text (outside header, nav and footer) on a page that shows nothing of an app. */
const interstitialTextLength = 300;

/** The URL path looks like a sign-in, verification or SSO page. */
export function isLoginUrl(url: string): boolean {
  return loginPath.test(new URL(url).pathname);
}

/** A link that offers to sign in: its whole text says so, in the languages sites commonly use, or it leads to a login page. */
export function isSignInLink(link: { href: string; text: string }): boolean {
  return signInLinkWords.test(link.text) || isLoginUrl(link.href);
}

/** How likely a link leads to the login form, 0 for not at all: its text offering to sign in counts most, then a login address, then an account link. */
export function signInLinkRank(link: { href: string; text: string }): number {
  const text = signInLinkWords.test(link.text) ? 2 : accountLinkWords.test(link.text) ? 1 : 0;
  return text + (isLoginUrl(link.href) ? 1 : 0);
}

function isSignInPage(page: PageModel): boolean {
  return isLoginUrl(page.url) || signInWords.test(page.title) || signInWords.test(page.text);
}

export function isSearchForm(form: Form): boolean {
  const boxes = form.controls.filter(isFillable);
  return /search/.test(form.identity) || form.controls.some((control) => control.type === "search") || (boxes.length > 0 && boxes.every((control) => control.searchBox));
}

/**
 * A page between the login and the app that shows nothing of the app (no field to fill, a link to
 * its own site at most, little text) and either draws what it shows on a canvas or says it is
 * checking the visitor ("Security check", "Just a moment..."): a challenge no answer of the
 * service's gets past. Links elsewhere (the checking service's own, its privacy notice) are no app.
 */
export function isInterstitial(page: PageModel): boolean {
  const origin = new URL(page.url).origin;
  if (page.text.length > interstitialTextLength || page.links.filter((link) => new URL(link.href).origin === origin).length > 1) return false;
  if (page.forms.some((form) => form.controls.some(isFillable))) return false;
  return page.drawsOnCanvas || interstitialWords.test(`${page.title} ${page.text}`);
}

/**
 * True when the page has an input for a password that a login form would ask for: not one in the
 * app's own form (`asksMoreThanLogin`), such as a network's password in a signed-in "connect" form.
 */
export function hasPasswordForm(page: PageModel): boolean {
  return page.forms.some(
    (form) => form.controls.some((control) => isFillable(control) && control.type === "password") && !asksMoreThanLogin(classifyFields(form, page, null)),
  );
}

/** The form asks more plain values than a login step does: the app's own form (settings, a "connect" or "new item" dialog). */
function asksMoreThanLogin(fields: ClassifiedField[]): boolean {
  return fields.filter((field) => field.canonical === "text" || field.canonical === "identifier").length > loginTextFieldsAtMost;
}

/**
 * The login step this page shows, or null when it shows none (a signed-in page, or no form at
 * all). `chosenMfa` is the method picked a step before, for a code box that does not say its channel.
 */
export function analyzeStep(page: PageModel, chosenMfa: MfaType | null): LoginStep | null {
  const signInPage = isSignInPage(page);
  const candidates = page.forms
    .filter((form) => !isSignOutForm(form) && !isSearchForm(form))
    .map((form) => {
      const fields = classifyFields(form, page, chosenMfa);
      const groups = choiceGroupsOf(form);
      return { form, fields, groups, score: scoreForm(form, fields, groups.length > 0, signInPage) };
    });
  const best = candidates.filter((candidate) => candidate.score > 0).sort((a, b) => b.score - a.score)[0] ?? null;
  const asksSecret = best?.fields.some((field) => field.canonical === "password" || field.canonical === "code" || field.canonical === "totp_code") ?? false;

  const usedIds = new Set<string>();
  let choices: FoundChoice[] = [];
  if (best) {
    choices = best.groups.flatMap((group) => typeChoices(group, page, groupName(group), usedIds));
  }
  if (choices.length === 0 && (!best || best.fields.length === 0)) {
    const buttonForms = buttonFormOptions(candidates.filter((candidate) => candidate.fields.length === 0 && candidate.groups.length === 0).map((candidate) => candidate.form));
    if (buttonForms.length >= 2) choices = typeChoices(buttonForms, page, groupName(buttonForms), usedIds);
    else {
      const links = accountLinkOptions(page);
      if (links.length > 0) choices = typeChoices(links, page, "account", usedIds);
    }
  }
  // A sign-out control means a session: what else the page offers (a profile form, a "Delete" button)
  // is not a login step, unless it asks for a secret or is a real picker (accounts, MFA methods).
  const picksLogin = choices.some((choice) => choice.type === "account" || choice.type === "mfa_method");
  if (page.hasSignOut && !asksSecret && !picksLogin) return null;
  const fields = best?.fields ?? [];
  const sso = signInPage || fields.length > 0 ? ssoChoices(page, usedIds) : [];
  const allChoices = [...choices, ...sso];
  if (fields.length === 0 && allChoices.length === 0) return externalStep(page, signInPage);
  const asksLogin = !asksMoreThanLogin(fields) && (asksSecret || allChoices.length > 0 || (best !== null && offersToProceed(best.form)));

  const forms: Form[] = [];
  const formIndex = (form: Form) => {
    if (!forms.includes(form)) forms.push(form);
    return forms.indexOf(form);
  };
  const fieldForm = fields.length > 0 ? formIndex(best!.form) : null;
  const plannedChoices = allChoices.map((choice): PlannedChoice => {
    const common = { id: choice.id, type: choice.type, label: choice.label, mfaType: choice.mfaType, provider: choice.provider, selector: choice.selector };
    if ("url" in choice.action) return { ...common, url: choice.action.url };
    if ("script" in choice.action) return common;
    const { form, pairs, button } = choice.action;
    const withButton = button?.name && !pairs.some(([name]) => name === button.name) ? [...pairs, [button.name, button.value] as [string, string]] : pairs;
    return { ...common, form: formIndex(form), pairs: withButton };
  });
  const choiceNames = new Set(plannedChoices.flatMap((choice) => (choice.pairs ?? []).map(([name]) => name)));
  const plan: StepPlan = {
    kind: "input",
    pageUrl: page.url,
    forms: forms.map((form) => formPlan(form, form === best?.form ? fields : [], choiceNames)),
    fieldForm,
    fields: fields.map((field) => ({
      id: field.id,
      name: field.control.name,
      ref: field.ref,
      type: field.canonical,
      linkedMfaType: field.linkedMfaType,
      required: field.required,
    })),
    choices: plannedChoices,
    signature: [
      fieldForm === null ? "" : new URL(forms[fieldForm]!.action).pathname,
      fields.map((field) => field.control.name).sort().join(","),
      plannedChoices.map((choice) => choice.id).sort().join(","),
    ].join("|"),
  };
  return { prompt: promptOf(page, fields, allChoices), plan, asksLogin };
}

/** The form says it is a login's (its id, class or action), or has a button that signs in or goes on ("Next", "Continue"). */
function offersToProceed(form: Form): boolean {
  if (formPurpose.test(form.identity)) return true;
  return form.controls.some(
    (control) => (control.tag === "button" || isSubmit(control) || control.type === "button") && proceedWords.test(control.lines.join(" ") || control.value || (control.element.attribs["aria-label"] ?? "")),
  );
}

function scoreForm(form: Form, fields: ClassifiedField[], offersChoices: boolean, signInPage: boolean): number {
  const has = (type: CanonicalType) => fields.some((field) => field.canonical === type);
  let score = 0;
  if (has("password")) score += 10;
  score -= 8 * fields.filter((field) => field.newPassword).length;
  if (has("code") || has("totp_code")) score += 9;
  if (offersChoices) score += 7;
  if (fields.length === 1 && has("identifier") && signInPage) score += 6;
  if (fields.length > 0 && fields.every((field) => field.canonical === "text") && signInPage) score += 3;
  if (formPurpose.test(form.identity)) score += 2;
  if (otherPurpose.test(form.identity)) score -= 10;
  return score;
}

function formPlan(form: Form, fields: ClassifiedField[], choiceNames: Set<string>): FormPlan {
  const entries: FormEntry[] = [];
  for (const control of form.controls) {
    if (!control.name || control.disabled || isSubmit(control) || control.tag === "button" || control.type === "file") continue;
    const field = fields.find((candidate) => candidate.control === control);
    if (field) entries.push({ name: control.name, field: field.id });
    else if (control.type === "radio") {
      if (control.checked && !choiceNames.has(control.name)) entries.push({ name: control.name, value: control.value || "on" });
    } else if (control.type === "checkbox") {
      if (control.checked || isRememberMe(control)) entries.push({ name: control.name, value: control.value || "on" });
    } else if (!["reset", "button"].includes(control.type)) entries.push({ name: control.name, value: control.value });
  }
  const submit = primarySubmit(form);
  return { action: form.action, method: form.method, entries, submitter: submit?.name ? [submit.name, submit.value] : null };
}

export interface FormRequest {
  url: string;
  method?: "POST";
  body?: string;
}

/** The request a browser sends for `form`: its entries in order, then `pairs`, then (typing done) the submit button. */
export function encodeForm(form: FormPlan, values: Record<string, string>, pairs: Array<[string, string]>, withSubmitter: boolean): FormRequest {
  const params = new URLSearchParams();
  for (const entry of form.entries) params.append(entry.name, "field" in entry ? (values[entry.field] ?? "") : entry.value);
  for (const [name, value] of pairs) params.append(name, value);
  if (withSubmitter && form.submitter) params.append(...form.submitter);
  if (form.method === "POST") return { url: form.action, method: "POST", body: params.toString() };
  const url = new URL(form.action);
  url.search = params.toString();
  return { url: url.href };
}

/**
 * Where the page sends a browser on its own: a short meta refresh, or a form of hidden values that
 * a script submits on load (the SAML and OIDC form_post hand-off between an identity provider and the site).
 */
export function automaticRequest(page: PageModel): FormRequest | null {
  // A page that refreshes itself (waiting for an approval) is a step, not a hand-off.
  if (page.refreshUrl && page.refreshUrl !== page.url) return { url: page.refreshUrl };
  if (!page.submitsByScript) return null;
  const handoff = page.forms.find(
    (form) => form.controls.some((control) => control.type === "hidden") && form.controls.every((control) => control.type === "hidden" || isSubmit(control)),
  );
  return handoff ? encodeForm(formPlan(handoff, [], new Set()), {}, [], false) : null;
}

function promptOf(page: PageModel, fields: ClassifiedField[], choices: FoundChoice[]): FlowPrompt {
  const hint = fields.some((field) => field.canonical === "code" || field.canonical === "totp_code")
    ? (page.paragraphs.find((paragraph) => paragraph.length <= 200 && instructionWords.test(paragraph)) ?? null)
    : null;
  const isCode = (field: ClassifiedField) => field.canonical === "code" || field.canonical === "totp_code";
  return {
    discovered_fields: fields.map((field) => toDiscoveredField(field, isCode(field) ? hint : null)),
    fields: fields.map(toCanonicalField),
    choices: choices.map((choice) => ({ id: choice.id, label: choice.label, type: choice.type, description: choice.description, observed_selector: choice.selector })),
    mfa_options: choices
      .filter((choice) => choice.type === "mfa_method" && choice.mfaType)
      .map((choice) => ({ label: choice.label, type: choice.mfaType!, description: choice.description, target: mfaTarget(choice.label) })),
    sign_in_options: choices
      .filter((choice) => choice.type === "account")
      .map((choice) => ({ id: choice.id, label: choice.label, description: choice.description })),
    pending_sso_buttons: choices
      .filter((choice) => choice.type === "sso_provider")
      .map((choice) => ({ label: choice.label, provider: choice.provider!, selector: choice.selector })),
    external_action_message: null,
  };
}

/** A sign-in page with nothing to fill in that tells the person to act elsewhere ("Check your phone to approve"). */
function externalStep(page: PageModel, signInPage: boolean): LoginStep | null {
  const message = signInPage ? page.paragraphs.find((paragraph) => paragraph.length <= 300 && externalWords.test(paragraph)) : undefined;
  if (!message) return null;
  return {
    prompt: { discovered_fields: [], fields: [], choices: [], mfa_options: [], sign_in_options: [], pending_sso_buttons: [], external_action_message: message },
    plan: { kind: "external", pageUrl: page.url, forms: [], fieldForm: null, fields: [], choices: [], signature: `external|${new URL(page.url).pathname}` },
    asksLogin: true,
  };
}

function groupName(options: Array<{ action: FoundChoice["action"] }>): string {
  const first = options[0]?.action;
  return first && "form" in first ? (first.pairs[0]?.[0] ?? "") : "";
}
