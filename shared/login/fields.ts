import type { Control, Form, PageModel } from "./page.ts";
import type { CanonicalField, DiscoveredField, MfaType } from "./types.ts";

/** Which inputs of a form a person fills in, and what each one is for. */

export type CanonicalType = CanonicalField["type"];

export interface ClassifiedField {
  control: Control;
  id: string;
  /** The credential key a durable value is stored under; for one-time codes, the kind of code. */
  ref: string;
  canonical: CanonicalType;
  discovered: DiscoveredField["type"];
  linkedMfaType: MfaType | null;
  required: boolean;
  /** `autocomplete="new-password"` or a "confirm password" box: a sign-up or reset form, not a login. */
  newPassword: boolean;
}

const fillableTypes = new Set(["text", "email", "password", "tel", "number", "url"]);
const codeName = /(^|[_\-.[])(otp|totp|mfa|2fa|tfa|code|pin|passcode|verification|verify|smscode|otpcode)([_\-.\]]|$)|one.?time|two.?factor/i;
/** Words of a one-time code box's label, in the languages sites commonly use (German compounds end in "code"). */
const codeWords =
  /\b(code|passcode|one-time password|otp|2fa|verification number|security number|(bestätigungs|sicherheits|verifizierungs|authentifizierungs|anmelde|einmal)-?code|einmal-?(passwort|kennwort)|c[óo]digo|mot de passe à usage unique|contraseña de un solo uso)\b/i;
const identifierWords = /\b(user(name)?|e-?mail|login|identifier|account|phone|mobile|member|customer)\b|^(user|email|login|username|userid|user_id|uid|mail)$/i;
const rememberWords = /remember|keep me|stay signed|trust this/i;

/** A password box that is a one-time code's: "One-Time Password", "OTP", "2FA". */
const oneTimeWords = /one-?time|\b(otp|totp|2fa)\b|two-?factor|einmal|usage unique|un solo uso/i;
/** Words that name a code's channel outright, in English, German, French and Spanish. */
const channelPatterns: Array<[MfaType, RegExp]> = [
  [
    "totp",
    /authenticator|autenticador|authentificateur|auth(entication)? app|\btotp\b|google auth|authy|one-time password app|security app|\b(from|in|on) (your|the) (\w+ )?app\b|authentifizierungs-?app|application d'authentification|aplicaci[óo]n de autenticaci[óo]n/i,
  ],
  ["sms", /text message|\bsms\b|\btext(ed)? (you|to)\b|\bby text\b|mobile phone|phone (number )?ending|sent to your (mobile|phone)|textnachricht|mensaje de texto|message texte/i],
  ["call", /\b(phone call|voice call|call you|we('ll| will) call)\b|\banruf\b|appel (vocal|téléphonique)|llamada/i],
  ["email", /\be-?mail\b|\binbox\b|[\w*.+-]+@[\w-]+\.[\w.]+|courriel|correo/i],
];
/**
 * What apps call the code of an authenticator app without naming the app: read as TOTP only where
 * nothing on the page names another channel (a text message, an email), as "a one-time password
 * sent to your phone" does.
 */
const totpWords =
  /one-?time password|two-?factor|\b2fa\b|two-step verification|einmal-?(passwort|kennwort|code)|zwei-?faktor|mot de passe à usage unique|code à usage unique|(double|deux facteurs) authentification|authentification à deux facteurs|contraseña de un solo uso|c[óo]digo de un solo uso|(autenticaci[óo]n|verificaci[óo]n) (de|en) dos (factores|pasos)/i;

/** The MFA channel a text names ("the code from your authenticator app" -> totp), or null. */
function channelOf(text: string): MfaType | null {
  return channelPatterns.find(([, pattern]) => pattern.test(text))?.[0] ?? null;
}

/**
 * A code box's channel: the nearest text that names one (the input's label, the form, the page,
 * the URL), else the MFA method chosen a step before, else TOTP where the page uses an
 * authenticator's words ("One-Time Password", "two-factor authentication code"); null when nothing
 * tells (`autocomplete="one-time-code"` alone is an SMS code as often as an app's).
 */
function codeChannel(control: Control, form: Form, page: PageModel, chosenMfa: MfaType | null): MfaType | null {
  const label = `${control.label} ${control.placeholder}`;
  const named = channelOf(label) ?? channelOf(form.text) ?? channelOf(page.text) ?? channelOf(new URL(page.url).search) ?? chosenMfa;
  if (named) return named;
  return [label, form.text, page.text, page.title].some((text) => totpWords.test(text)) ? "totp" : null;
}

/** Inputs a person types into: visible, enabled, editable, named. */
export function isFillable(control: Control): boolean {
  return (
    control.tag === "input" &&
    fillableTypes.has(control.type) &&
    control.name !== "" &&
    !control.readonly &&
    !control.disabled &&
    !control.concealed
  );
}

/** A checkbox a login should tick: "Remember me" gives the longer-lived session worth keeping. */
export function isRememberMe(control: Control): boolean {
  return control.tag === "input" && control.type === "checkbox" && rememberWords.test(`${control.label} ${control.name} ${control.id}`);
}

/**
 * Classifies a form's fillable inputs; a one-time code's channel as `codeChannel` reads it.
 */
export function classifyFields(form: Form, page: PageModel, chosenMfa: MfaType | null): ClassifiedField[] {
  // A search box beside a login's fields (a signed-in page's header) is sent as it is, never asked.
  const fillable = form.controls.filter((control) => isFillable(control) && !control.searchBox);
  const usedIds = new Set<string>();
  let identifierTaken = false;
  const fields = fillable.map((control): ClassifiedField => {
    const hints = `${control.name} ${control.id} ${control.label} ${control.placeholder}`;
    const isOneTimeCode =
      control.autocomplete.includes("one-time-code") ||
      codeName.test(control.name) ||
      codeName.test(control.id) ||
      codeWords.test(`${control.label} ${control.placeholder}`) ||
      (control.inputmode === "numeric" && control.maxLength !== null && control.maxLength >= 4 && control.maxLength <= 8);
    let canonical: CanonicalType;
    let linkedMfaType: MfaType | null = null;
    if (control.type === "password" && !control.autocomplete.includes("one-time-code") && !oneTimeWords.test(hints)) canonical = "password";
    else if (isOneTimeCode) {
      linkedMfaType = codeChannel(control, form, page, chosenMfa);
      canonical = linkedMfaType === "totp" ? "totp_code" : "code";
    } else if (!identifierTaken && (/username|email/.test(control.autocomplete) || control.type === "email" || identifierWords.test(hints))) {
      canonical = "identifier";
    } else canonical = "text";
    if (canonical === "identifier") identifierTaken = true;
    return {
      control,
      id: "",
      ref: "",
      canonical,
      discovered: discoveredType(control, canonical),
      linkedMfaType,
      required: canonical !== "text" || control.required,
      newPassword: canonical === "password" && (control.autocomplete.includes("new-password") || /confirm|repeat|again|new/i.test(hints)),
    };
  });
  // A login form's one other box is where the account name goes, however the site labels it.
  const textBoxes = fields.filter((field) => field.canonical === "text" && ["text", "email", "tel"].includes(field.control.type));
  if (!identifierTaken && fields.some((field) => field.canonical === "password") && textBoxes.length === 1) {
    textBoxes[0]!.canonical = "identifier";
    textBoxes[0]!.required = true;
  }
  for (const field of fields) {
    field.ref = field.canonical === "text" ? slug(field.control.name) : field.canonical;
    field.id = uniqueId(field.canonical === "text" ? `field_${field.ref}` : field.canonical, usedIds);
  }
  return fields;
}

function discoveredType(control: Control, canonical: CanonicalType): DiscoveredField["type"] {
  if (canonical === "password") return "password";
  if (canonical === "totp_code") return "totp";
  if (canonical === "code") return "code";
  return (["email", "tel", "number", "url"] as const).find((type) => type === control.type) ?? "text";
}

export function toDiscoveredField(field: ClassifiedField, hint: string | null): DiscoveredField {
  const { control } = field;
  return {
    name: control.name,
    label: control.label || control.placeholder || control.name,
    selector: cssSelector(control),
    type: field.discovered,
    ...(control.placeholder ? { placeholder: control.placeholder } : {}),
    required: field.required,
    ...(hint ? { hint } : {}),
    linked_mfa_type: field.linkedMfaType,
  };
}

export function toCanonicalField(field: ClassifiedField): CanonicalField {
  return {
    id: field.id,
    ref: field.ref,
    type: field.canonical,
    label: field.control.label || field.control.placeholder || field.control.name,
    observed_selector: cssSelector(field.control),
    required: field.required,
  };
}

export function cssSelector(control: Control): string {
  if (/^[A-Za-z][\w-]*$/.test(control.id)) return `#${control.id}`;
  return `${control.tag}[name="${control.name.replace(/["\\]/g, "\\$&")}"]`;
}

/** Lower-case letters, digits and underscores: ids a client can type. */
export function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "_")
      .replace(/^_+|_+$/g, "") || "value"
  );
}

export function uniqueId(base: string, used: Set<string>): string {
  let id = base;
  for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
  used.add(id);
  return id;
}
