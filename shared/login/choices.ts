import { slug, uniqueId } from "./fields.ts";
import { isFragmentOnly, signOutWords, xpathOf, type Control, type Form, type Link, type PageModel } from "./page.ts";
import { ssoProviderOfHost } from "../policy/scope.ts";
import type { Choice, MfaType } from "./types.ts";

/** The things a page offers to pick: MFA methods, accounts, identity providers, or other options. */

export type ChoiceType = Choice["type"];

/**
 * How to act on a choice: submit a form with extra name=value pairs, follow a link, or press an
 * element that only the page's script acts on (`script`), which only a browser can.
 */
export type ChoiceAction = { form: Form; pairs: Array<[string, string]>; button: Control | null } | { url: string } | { script: true };

export interface FoundChoice {
  id: string;
  type: ChoiceType;
  label: string;
  description: string | null;
  mfaType: MfaType | null;
  /** For an identity provider: its id (`google`, `testsso`). */
  provider: string | null;
  selector: string;
  action: ChoiceAction;
}

interface Option {
  value: string;
  label: string;
  description: string | null;
  selector: string;
  action: ChoiceAction;
}

const mfaValueSynonyms: Record<string, MfaType> = {
  sms: "sms", text: "sms", call: "call", voice: "call", phone: "call", email: "email", totp: "totp",
  otp: "totp", app: "totp", authenticator: "totp", push: "push", password: "password",
};
const mfaLabelPatterns: Array<[MfaType, RegExp]> = [
  ["totp", /authenticator|auth(entication)? app|\btotp\b|verification app|one-time password app|google auth|authy/i],
  ["sms", /text message|\bsms\b|\btext me\b|\btext\b/i],
  ["call", /\bcall\b|voice/i],
  ["email", /\be-?mail\b/i],
  ["push", /\bpush\b|notification|approve (on|from|with)|\bprompt\b/i],
  ["switch", /another way|other (method|option)s?|different method/i],
  ["password", /\bpassword\b/i],
];
const verificationWords = /verif|two-factor|2-step|two-step|2fa|mfa|security check|how do you want|confirm (it'?s|that it'?s) you/i;
const accountPickerWords = /(choose|select|pick|switch) (an |your |the )?(account|profile|workspace|organi[sz]ation|tenant)|which account/i;
const accountGroupNames = /account|workspace|tenant|org|profile|user/i;
/** "Sign in with X", "Continue with X" and their kin in German, French and Spanish: X is the identity provider. */
const ssoWords =
  /^(?:sign in|log ?in|continue|sign up|anmelden|einloggen|weiter|se connecter|connexion|continuer|iniciar sesi[óo]n|continuar|entrar)\s+(?:with|using|via|through|mit|über|avec|con)\s+(.{2,40}?)[.!]?$/i;
/**
 * Where an identity provider asks who you are (`/login/oauth/authorize`, `/o/oauth2/auth`, `/dialog/oauth`,
 * `/app/x/sso/saml`): a link to one of its other pages (a project on GitHub, a company page) signs nobody in.
 */
const authorizationPath = /\/(?:oauth2?|authori[sz]e|authorization|auth|login|signin|sign-in|sign_in|sso|saml2?|openid(?:-connect)?|oidc)(?:[/.]|$)/i;
const navigationWords = /sign ?out|log ?out|help|privacy|terms|cancel|back|home|forgot|create|sign ?up|register|learn more|support/i;
const dismissWords = /^(cancel|back|close|skip|not now|no thanks)$/i;

function mfaTypeOf(value: string, label: string): MfaType | null {
  return mfaValueSynonyms[value.toLowerCase()] ?? mfaLabelPatterns.find(([, pattern]) => pattern.test(label))?.[0] ?? null;
}

/** Radio groups and same-name submit buttons with two or more values: one set of choices each. */
export function choiceGroupsOf(form: Form): Option[][] {
  const groups = new Map<string, Option[]>();
  const submitter = primarySubmit(form);
  for (const control of form.controls) {
    if (!control.name || control.disabled || control.concealed) continue;
    const isRadio = control.tag === "input" && control.type === "radio";
    const isNamedButton = isSubmit(control) && control.value !== "";
    if (!isRadio && !isNamedButton) continue;
    const key = `${isRadio ? "radio" : "button"}:${control.name}`;
    const lines = isRadio ? splitLabel(control.label) : control.lines;
    const option: Option = {
      value: control.value,
      label: lines[0] ?? control.value,
      description: lines.slice(1).join(" ") || null,
      selector: xpathOf(control.element),
      action: { form, pairs: [[control.name, control.value]], button: isRadio ? submitter : control },
    };
    groups.set(key, [...(groups.get(key) ?? []), option]);
  }
  return [...groups.values()].filter((options) => new Set(options.map((option) => option.value)).size >= 2);
}

/** Several forms that are each a single button ("one form per account"): one choice per form. */
export function buttonFormOptions(forms: Form[]): Option[] {
  return forms.flatMap((form) => {
    const buttons = form.controls.filter(isSubmit);
    const button = buttons[0];
    if (buttons.length !== 1 || !button || dismissWords.test(button.lines.join(" "))) return [];
    const lines = button.lines.length > 0 ? button.lines : [button.value];
    const hiddenValue = form.controls.find((control) => control.type === "hidden" && accountGroupNames.test(control.name))?.value;
    return [{
      value: button.value || hiddenValue || lines[0] || String(form.index),
      label: lines[0] ?? "",
      description: lines.slice(1).join(" ") || null,
      selector: xpathOf(button.element),
      action: { form, pairs: button.name ? [[button.name, button.value]] : [], button },
    }];
  });
}

/** On a "Choose an account" page without forms for it: the links in the page's content. */
export function accountLinkOptions(page: PageModel): Option[] {
  if (!accountPickerWords.test(page.text)) return [];
  const origin = new URL(page.url).origin;
  return page.links
    .filter((link) => {
      const { origin: linkOrigin, pathname } = new URL(link.href);
      const navigates = navigationWords.test(link.text) || signOutWords.test(pathname) || pathname === "/";
      return linkOrigin === origin && link.text !== "" && !navigates && !inChrome(link);
    })
    .map((link) => ({ value: link.href, label: link.text, description: null, selector: xpathOf(link.element), action: { url: link.href } }));
}

/** Names the kind of a set of options from their labels and the page around them. */
export function typeChoices(options: Option[], page: PageModel, groupName: string, usedIds: Set<string>): FoundChoice[] {
  const mfaTypes = options.map((option) => mfaTypeOf(option.value, `${option.label} ${option.description ?? ""}`));
  const recognised = mfaTypes.filter((type): type is MfaType => type !== null);
  const isMfa = (recognised.length >= 2 && new Set(recognised).size >= 2) || (recognised.length >= 1 && verificationWords.test(page.text));
  const type: ChoiceType = isMfa ? "mfa_method" : accountPickerWords.test(page.text) || accountGroupNames.test(groupName) ? "account" : "other";
  return options.map((option, index) => {
    const mfaType = isMfa ? mfaTypes[index]! : null;
    const base = type === "mfa_method" ? (mfaType ?? `mfa_${slug(option.value)}`) : `${type === "account" ? "account" : "choice"}_${slug(option.value || option.label)}`;
    return {
      id: uniqueId(base, usedIds),
      type,
      label: option.label,
      description: option.description,
      mfaType,
      provider: null,
      selector: option.selector,
      action: option.action,
    };
  });
}

/**
 * "Sign in with X" links, buttons and anything else pressed (role=button, an `<a>` with a click
 * handler, an icon named by its aria-label, title or image alt), and links to a known identity provider's
 * sign-in.
 */
export function ssoChoices(page: PageModel, usedIds: Set<string>): FoundChoice[] {
  const found: FoundChoice[] = [];
  const add = (label: string, provider: string, element: Control["element"], action: ChoiceAction) => {
    if (found.some((choice) => choice.provider === provider)) return;
    found.push({
      id: uniqueId(`sso_${provider}`, usedIds),
      type: "sso_provider",
      label,
      description: null,
      mfaType: null,
      provider,
      selector: xpathOf(element),
      action,
    });
  };
  for (const link of page.links) {
    // An `<a href="#">` goes nowhere by itself: its script acts, and it is pressed below.
    if (isFragmentOnly(link.element)) continue;
    const named = ssoWords.exec(link.text)?.[1];
    const href = new URL(link.href);
    const known = authorizationPath.test(href.pathname) ? ssoProviderOfHost(href.hostname) : null;
    if (named || known) add(link.text || known!, known ?? slug(named!), link.element, { url: link.href });
  }
  for (const form of page.forms) {
    for (const button of form.controls.filter(isSubmit)) {
      const text = button.lines.join(" ");
      const named = ssoWords.exec(text)?.[1];
      const known = ssoProviderOfHost(new URL(form.action).hostname);
      const onlyButton = form.controls.filter(isSubmit).length === 1;
      if (named || (known && onlyButton)) {
        add(text, known ?? slug(named!), button.element, { form, pairs: button.name ? [[button.name, button.value]] : [], button });
      }
    }
  }
  for (const pressable of page.pressables) {
    const named = ssoWords.exec(pressable.name)?.[1];
    if (named) add(pressable.name, slug(named), pressable.element, { script: true });
  }
  return found;
}

export function isSubmit(control: Control): boolean {
  return (control.tag === "button" && control.type === "submit") || (control.tag === "input" && (control.type === "submit" || control.type === "image"));
}

/** The button a person presses to send the form: the first submit that is not Cancel or Back. */
export function primarySubmit(form: Form): Control | null {
  return form.controls.find((control) => isSubmit(control) && !control.disabled && !dismissWords.test(control.lines.join(" "))) ?? null;
}

export function isSignOutForm(form: Form): boolean {
  const buttons = form.controls.filter(isSubmit);
  return signOutWords.test(form.identity) || (buttons.length === 1 && signOutWords.test(buttons[0]!.lines.join(" ")));
}

/** A masked destination in an MFA option's label: "Text message to ***-1234" -> "***-1234". */
export function mfaTarget(label: string): string | null {
  return /\b(?:to|at)\s+(\S*\*.*)$/i.exec(label)?.[1] ?? /\S*\*{2,}\S*/.exec(label)?.[0] ?? null;
}

/** A radio's label in lines: "Acme Corp — ada@acme.example" reads as a name and a description. */
function splitLabel(label: string): string[] {
  return label.split(/\s+[—–|]\s+/).filter(Boolean);
}

function inChrome(link: Link): boolean {
  for (let node = link.element.parent; node && "name" in node; node = node.parent) {
    if (node.name === "header" || node.name === "nav" || node.name === "footer") return true;
  }
  return false;
}
