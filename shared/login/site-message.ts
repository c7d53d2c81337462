import { isTag, type Element } from "domhandler";
import { DomUtils, parseDocument } from "htmlparser2";
import { isFillable } from "./fields.ts";
import { isSearchForm } from "./forms.ts";
import { collapse, isHidden, parentElement, textOf, unescapeJs, type PageModel } from "./page.ts";

/**
 * The site's own message after a step (a wrong password's "Incorrect username or password", a
 * lockout's "Too many attempts"), read where sites put it: elements marked as an error, alert or
 * notice, dialogs and toasts, field errors, live regions, a rejection sentence next to the form, a
 * literal message an inline script writes, text the page's script drew (in a page a browser
 * rendered), or a page title that says the login failed. A message box's text is its body, not its
 * title or an icon's name, unless the title is all it says. Never from what a person does not see
 * (`<noscript>`, scripts, templates, hidden elements) or from the page chrome, and never a text that
 * holds a secret the person just typed.
 */

export interface SiteMessage {
  text: string;
  /** False for a success or information notice ("You are now logged out") or a message saying neither. */
  error: boolean;
}

export interface MessageSources {
  /**
   * The HTML the site served for a page that a browser rendered (its script run): a sentence of the
   * rendered page that this does not show was drawn by the page's script, a message box or an inline
   * script's message that nothing marks.
   */
  servedHtml?: string;
}

interface Candidate extends SiteMessage {
  element: Element | null;
  /** A box's heading rather than its text: it gives way to a message that says more. */
  title: boolean;
  strength: number;
  distance: number;
  order: number;
}

/** Shorter than this, a typed secret is too likely a piece of the site's own words ("a", "in") to tell an echo from them. */
const minEchoedSecretLength = 3;

/** Longer than this, an element is a container of content, not a message. */
const maxCandidateLength = 500;
const maxNearFormLength = 200;
const maxReportedLength = 300;

const errorMarker = /error|danger|invalid|warning|fail|denied/;
const noticeMarker = /success|(^|[-_])(info|information|positive|confirm|confirmation)([-_]|$)/;
const messageMarker = /(^|[-_])(alerts?|flash(es)?|notices?|notifications?|messages?|msgs?|callout|toast|snack(bar)?|modal|dialog|popup|feedback)([-_]|$)/;
/** A box's heading, by its class or id. */
const titleMarker = /(^|[-_])(title|titlebar|heading|header|headline|caption)([-_]|$)/;
/** An icon font's class (Font Awesome, Bootstrap Icons, Glyphicons, Material), whose element's text is a glyph's name. */
const iconMarker = /(^|[-_])(icons?|glyph(icon)?|fa[srbl]?|bi|mdi|material-symbols)([-_]|$)/;
const headings = new Set(["h1", "h2", "h3", "h4", "h5", "h6", "legend"]);
const boxRoles = new Set(["dialog", "alertdialog", "alert"]);
const helpMarker = /help-block|help-text|helper-text|form-text|(^|[-_])hint([-_]|$)/;
const hiddenMarker = /^(hidden|d-none|is-hidden|hide|invisible|sr-only|visually-?hidden|screen-reader-text)$|screen-reader/;
const chromeMarker = /cookie|consent|gdpr/;
const chromeRoles = new Set(["banner", "navigation", "contentinfo"]);
const sectioning = new Set(["article", "aside", "main", "section", "form", "dialog"]);
const unseen = new Set(["script", "style", "noscript", "template", "head", "title", "select", "option", "textarea", "svg", "iframe", "object"]);
const controls = new Set(["input", "select", "textarea", "button", "option", "form"]);
const sentenceElements = new Set(["p", "div", "span", "li", "strong", "b", "em", "small", "font", "td", "dd", "h1", "h2", "h3", "h4", "h5", "h6"]);

/** Words of a message that reports a problem, for elements already marked as messages. */
const errorWords =
  /\b(error|errors|incorrect|invalid|wrong|denied|refused|rejected|forbidden|unauthori[sz]ed|not (recogni[sz]ed|allowed|permitted|valid|found)|(doesn'?t|does not|didn'?t|did not) match|failed|failure|try again|unable to|could ?n[o']t|cannot|locked|suspended|disabled|blocked|expired|too many|required|missing|must be|please (enter|provide|fill|check)|no account|unknown (user|account|username|e-?mail))\b/i;
/** Stricter words for text that nothing marks as a message: a sentence near the form, the title, a script's literal. */
const rejectionWords =
  /\b(error|incorrect|invalid|wrong|denied|refused|rejected|not recogni[sz]ed|(doesn'?t|does not|didn'?t|did not) match|failed|failure|try again|unable to (sign|log)|could ?n[o']t (sign|log)|locked|too many|no account)\b/i;
const successWords =
  /\b(success\w*|logged out|signed out|been sent|check your (e-?mail|inbox|phone)|we('ve| have)? (sent|e-?mailed)|welcome|saved|updated|confirmed|verified|thank you|thanks)\b/i;
/** What a login's own message speaks of, so a rejection far from the form still beats a page-wide warning ("Your browser is not supported"). */
const loginWords = /\b(password|passcode|user ?name|login|log ?in|sign ?in|e-?mail|credentials?|account|code|attempts?)\b/i;

/**
 * Every message the page shows, best first: errors before other messages; then those that belong to
 * the login (in or beside its form, or speaking of the login) before page-wide ones; then the
 * strongest marking; then the nearest the login form.
 */
export function siteMessages(page: PageModel, secrets: readonly string[], sources: MessageSources = {}): SiteMessage[] {
  const context = pageContext(page);
  const candidates = [...markedMessages(context), ...scriptMessages(context), ...titleMessages(page)];
  candidates.push(...unmarkedSentences(context, candidates, sources.servedHtml));
  // Case-blind: a site may change the case of what it repeats.
  const typed = secrets
    .map((secret) => collapse(secret).toLowerCase())
    .filter((secret) => secret.length >= minEchoedSecretLength);
  const safe = candidates.filter((candidate) => !typed.some((secret) => candidate.text.toLowerCase().includes(secret)));
  const kept = safe.filter((candidate) => !hasInnerRival(candidate, safe));
  const ofLogin = new Map(kept.map((candidate) => [candidate, context.besideForm(candidate.element) || (candidate.error && loginWords.test(candidate.text))]));
  kept.sort(
    (a, b) =>
      Number(b.error) - Number(a.error) ||
      Number(ofLogin.get(b)) - Number(ofLogin.get(a)) ||
      Number(a.title) - Number(b.title) ||
      b.strength - a.strength ||
      a.distance - b.distance ||
      a.order - b.order,
  );
  const seen = new Set<string>();
  const messages: SiteMessage[] = [];
  for (const { text, error } of kept) {
    if (seen.has(text)) continue;
    seen.add(text);
    messages.push({ text: shorten(text), error });
  }
  return messages;
}

/** The site's error message among `messages` (siteMessages), or null; notices ("Check your email") are never one. */
export function siteErrorOf(messages: readonly SiteMessage[]): string | null {
  return messages.find((message) => message.error)?.text ?? null;
}

interface PageContext {
  elements: Element[];
  orderOf: Map<Element, number>;
  byId: Map<string, Element>;
  loginForm: Element | null;
  /** Headings of boxes: headings, elements named as a title, and what a dialog's or alert's `aria-labelledby` names. */
  titles: Set<Element>;
  /** The login form's surroundings: its container, widened past wrappers that hold nothing else. */
  formScope: Element | null;
  isExcluded: (element: Element) => boolean;
  distanceToForm: (element: Element) => number;
  /** In the login form or beside it, within `formScope`. */
  besideForm: (element: Element | null) => boolean;
}

function pageContext(page: PageModel): PageContext {
  const elements = DomUtils.findAll(() => true, page.document.children);
  const byId = new Map<string, Element>();
  for (const element of elements) if (element.attribs.id && !byId.has(element.attribs.id)) byId.set(element.attribs.id, element);
  const orderOf = new Map(elements.map((element, order) => [element, order]));
  const loginForm = loginFormOf(page);
  const excluded = new Map<Element, boolean>();
  const isExcluded = (element: Element): boolean => {
    const known = excluded.get(element);
    if (known !== undefined) return known;
    const parent = parentElement(element);
    const result = unseen.has(element.name) || isUnread(element) || isChrome(element) || (parent !== null && isExcluded(parent));
    excluded.set(element, result);
    return result;
  };
  const formDepths = new Map<Element, number>();
  for (let node = loginForm, depth = 0; node; node = parentElement(node), depth++) formDepths.set(node, depth);
  // Steps through the tree to the form; ties go to the element fewer elements away in the page's order.
  const formOrder = loginForm ? orderOf.get(loginForm)! : 0;
  const distanceToForm = (element: Element): number => {
    if (!loginForm) return 0;
    const orderGap = Math.abs(orderOf.get(element)! - formOrder) / (elements.length + 1);
    for (let node: Element | null = element, up = 0; node; node = parentElement(node), up++) {
      const down = formDepths.get(node);
      if (down !== undefined) return up + down + orderGap;
    }
    return Number.POSITIVE_INFINITY;
  };
  const formScope = loginForm && scopeOf(loginForm);
  const besideForm = (element: Element | null): boolean => element !== null && formScope !== null && (element === formScope || isInside(element, formScope));
  const titles = new Set(elements.filter((element) => headings.has(element.name) || element.attribs.role === "heading" || markerNames(element).some((name) => titleMarker.test(name))));
  for (const box of elements) {
    if (!boxRoles.has(box.attribs.role ?? "") && box.name !== "dialog") continue;
    for (const id of (box.attribs["aria-labelledby"] ?? "").split(/\s+/)) {
      const label = id ? byId.get(id) : undefined;
      if (label) titles.add(label);
    }
  }
  return { elements, orderOf, byId, loginForm, titles, formScope, isExcluded, distanceToForm, besideForm };
}

/** The form's container, or the one around it while each holds nothing but the form's wrapper (at most three levels up). */
function scopeOf(form: Element): Element {
  let scope = parentElement(form) ?? form;
  for (let level = 0; level < 2 && scope.children.filter(isTag).length === 1; level++) scope = parentElement(scope) ?? scope;
  return scope;
}

/** The form a person types into: the one with a password field, else the one with the most fields that is not a search. */
function loginFormOf(page: PageModel): Element | null {
  const fillable = (form: PageModel["forms"][number]) => form.controls.filter(isFillable);
  const withPassword = page.forms.find((form) => fillable(form).some((control) => control.type === "password"));
  if (withPassword) return withPassword.element;
  const ranked = page.forms
    .filter((form) => !isSearchForm(form))
    .map((form) => ({ form, count: fillable(form).length }))
    .filter(({ count }) => count > 0)
    .sort((a, b) => b.count - a.count);
  return ranked[0]?.form.element ?? null;
}

/** Elements a site marks as a message: by class or id, by ARIA role or live region, or as the error text of an invalid field. */
function markedMessages(context: PageContext): Candidate[] {
  const fieldErrors = new Set<Element>();
  for (const element of context.elements) {
    if (element.attribs["aria-invalid"] !== "true") continue;
    const ids = `${element.attribs["aria-describedby"] ?? ""} ${element.attribs["aria-errormessage"] ?? ""}`.split(/\s+/);
    for (const id of ids) {
      const target = id ? context.byId.get(id) : undefined;
      if (target) fieldErrors.add(target);
    }
  }
  const candidates: Candidate[] = [];
  context.elements.forEach((element, order) => {
    if (controls.has(element.name) || context.isExcluded(element)) return;
    const marking = markingOf(element, fieldErrors.has(element));
    if (!marking) return;
    const text = messageText(element, context);
    if (!text || text.length > maxCandidateLength || containsFields(element)) return;
    const words = errorWords.test(text);
    const error = marking.error ?? (words || (!successWords.test(text) && marking.alert === true));
    const title = context.titles.has(element);
    candidates.push({ text, error, element, title, strength: marking.strength + (words ? 1 : 0), distance: context.distanceToForm(element), order });
  });
  return candidates;
}

/**
 * How an element is marked as a message; `error` when the marking alone says whether it is one,
 * otherwise its words decide (an alert saying nothing of success counts as an error).
 */
function markingOf(element: Element, fieldError: boolean): { strength: number; error?: boolean; alert?: boolean } | null {
  const names = markerNames(element);
  if (fieldError) return { strength: 4, error: true };
  if (names.some((name) => errorMarker.test(name))) return { strength: 4, error: true };
  if (names.some((name) => helpMarker.test(name)) && inErrorGroup(element)) return { strength: 4, error: true };
  if (names.some((name) => noticeMarker.test(name))) return { strength: 2, error: false };
  const role = element.attribs.role;
  if (role === "alert" || role === "alertdialog") return { strength: 3, alert: true };
  const live = element.attribs["aria-live"];
  const dialog = role === "dialog" || element.name === "dialog";
  if (dialog || role === "status" || live === "polite" || live === "assertive" || names.some((name) => messageMarker.test(name))) return { strength: 2 };
  return null;
}

/** Help text is a field error inside a group marked as failed (Bootstrap 3's `.has-error .help-block`, Rails' `.field_with_errors`). */
function inErrorGroup(element: Element): boolean {
  let node = parentElement(element);
  for (let level = 0; node && level < 3 && node.name !== "form"; level++, node = parentElement(node)) {
    if (markerNames(node).some((name) => errorMarker.test(name))) return true;
  }
  return false;
}

/**
 * A rejection sentence that nothing marks: "Login failed." in a plain `<p>` or `<font color=red>` in
 * the login form or beside it; and on a page that still asks to log in, one anywhere that speaks of
 * the login and that the page's script drew (not in `servedHtml`): a message box, a toast, an inline
 * script's message. The innermost such element, so one line and not its container.
 */
function unmarkedSentences(context: PageContext, marked: Candidate[], servedHtml: string | undefined): Candidate[] {
  // A signed-in page's own sentences are no answer to a login: only a page that still asks for one.
  const drawnHtml = context.loginForm ? servedHtml : undefined;
  let served: string | undefined;
  const drawnByScript = (html: string, text: string) => !(served ??= textOf(parseDocument(html))).includes(text);
  const insideMarked = (element: Element) => marked.some((candidate) => candidate.element && (candidate.element === element || isInside(element, candidate.element)));
  const found: Candidate[] = [];
  for (const element of context.elements) {
    if (!sentenceElements.has(element.name) || context.isExcluded(element) || containsFields(element)) continue;
    const beside = context.besideForm(element);
    if (!beside && drawnHtml === undefined) continue;
    const text = messageText(element, context);
    if (!text || text.length > maxNearFormLength || text.endsWith("?") || !rejectionWords.test(text) || successWords.test(text)) continue;
    if (!beside && (drawnHtml === undefined || !loginWords.test(text) || !drawnByScript(drawnHtml, text))) continue;
    if (DomUtils.findAll((node) => node.name === "a", element.children).some((link) => messageText(link, context) === text)) continue;
    if (insideMarked(element)) continue;
    found.push({ text, error: true, element, title: context.titles.has(element), strength: 1, distance: context.distanceToForm(element), order: context.orderOf.get(element)! });
  }
  return found.filter((candidate) => !found.some((other) => other !== candidate && isInside(other.element!, candidate.element!)));
}

/**
 * Literal messages inline scripts show, read from the script's text (never run): a string literal
 * assigned to `innerHTML`, `innerText` or `textContent` of `document.getElementById("id")` or
 * `document.querySelector("#id")`, given to jQuery's `$("#id").text(...)` / `.html(...)`, or to
 * `alert(...)`. The element must exist and be visible, and the statement must run when the page
 * loads: at the script's top level, or in an immediately invoked function or a load handler, never
 * in an `if`, a function or an event handler (form validation writes its messages there).
 */
const scriptWrites = [
  /\bdocument\s*\.\s*(?:getElementById\s*\(\s*(["'])([\w:.-]+)\1|querySelector\s*\(\s*(["'])#([\w-]+)\3)\s*\)\s*\.\s*(?:innerHTML|innerText|textContent)\s*=\s*(?<literal>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\$])*`)\s*(?=[;}\n]|$)/g,
  /(?:\$|\bjQuery)\s*\(\s*(["'])#([\w-]+)\1\s*\)\s*\.\s*(?:text|html)\s*\(\s*(?<literal>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\$])*`)\s*\)/g,
  /(?<![\w$.])(?:window\s*\.\s*)?alert\s*\(\s*(?<literal>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\$])*`)\s*\)/g,
];
const loadHandlerOpening =
  /(?:addEventListener\s*\(\s*["'](?:DOMContentLoaded|load)["']\s*,\s*|\bonload\s*=\s*|(?:\$|\bjQuery)\s*\(\s*(?:document\s*\)\s*\.\s*ready\s*\(\s*)?|\(\s*)(?:function\s*\w*\s*\([\w\s,]*\)|\([\w\s,]*\)\s*=>|\w+\s*=>)\s*$/;

function scriptMessages(context: PageContext): Candidate[] {
  const candidates: Candidate[] = [];
  context.elements.forEach((script, order) => {
    if (script.name !== "script" || script.attribs.src !== undefined || !isJavaScript(script.attribs.type) || isInert(script)) return;
    const code = DomUtils.textContent(script);
    for (const pattern of scriptWrites) {
      for (const match of code.matchAll(pattern)) {
        const id = match[2] ?? match[4];
        const target = id === undefined ? null : context.byId.get(id);
        if (target === undefined || (target && context.isExcluded(target)) || !runsOnLoad(code, match.index)) continue;
        const text = literalText(match.groups!.literal!);
        if (!text || text.length > maxCandidateLength) continue;
        candidates.push({ text, error: rejectionWords.test(text), element: target, title: false, strength: 1, distance: target ? context.distanceToForm(target) : Number.POSITIVE_INFINITY, order });
      }
    }
  });
  return candidates;
}

/** A script in `<template>` or `<noscript>` never runs in a browser that runs scripts. */
function isInert(script: Element): boolean {
  for (let node = parentElement(script); node; node = parentElement(node)) if (node.name === "template" || node.name === "noscript") return true;
  return false;
}

function isJavaScript(type: string | undefined): boolean {
  return type === undefined || type === "" || /^(text|application)\/(javascript|ecmascript)$|^module$/i.test(type.trim());
}

/** Whether the code at `index` runs as the page loads: every block around it opens an immediately invoked function or a load handler. */
function runsOnLoad(code: string, index: number): boolean {
  const blocks: boolean[] = [];
  for (let at = 0; at < index; at++) {
    const character = code[at]!;
    if (character === '"' || character === "'" || character === "`") at = endOfString(code, at);
    else if (code.startsWith("//", at)) at = endOf(code.indexOf("\n", at), code);
    else if (code.startsWith("/*", at)) at = endOf(code.indexOf("*/", at), code) + 1;
    else if (character === "{") blocks.push(loadHandlerOpening.test(code.slice(Math.max(0, at - 120), at)));
    else if (character === "}") blocks.pop();
    // The match sits inside a string or a comment: nothing runs it.
    if (at >= index) return false;
  }
  return blocks.every(Boolean);
}

function endOf(position: number, code: string): number {
  return position === -1 ? code.length : position;
}

function endOfString(code: string, start: number): number {
  for (let at = start + 1; at < code.length; at++) {
    if (code[at] === "\\") at++;
    else if (code[at] === code[start]) return at;
  }
  return code.length;
}

/** A JavaScript string literal's text; markup in it (an `innerHTML` value) is reduced to its visible text. */
function literalText(literal: string): string {
  return textOf(parseDocument(unescapeJs(literal.slice(1, -1))));
}

/** A title that reports the failure ("Login failed"): the last resort, after anything in the page's body. */
function titleMessages(page: PageModel): Candidate[] {
  if (!rejectionWords.test(page.title) || successWords.test(page.title)) return [];
  return [{ text: page.title, error: true, element: null, title: false, strength: 0, distance: Number.POSITIVE_INFINITY, order: 0 }];
}

/**
 * An outer candidate gives way to one inside it that says as much: `.cdx-message--error` to its
 * `.cdx-message__content`; never to its title, which says less.
 */
function hasInnerRival(candidate: Candidate, candidates: Candidate[]): boolean {
  const outer = candidate.element;
  if (!outer) return false;
  return candidates.some(
    (other) =>
      other !== candidate &&
      other.element &&
      other.element !== outer &&
      !other.title &&
      other.error === candidate.error &&
      other.strength >= candidate.strength &&
      isInside(other.element, outer),
  );
}

function isInside(element: Element, container: Element): boolean {
  for (let node = parentElement(element); node; node = parentElement(node)) if (node === container) return true;
  return false;
}

/**
 * The text a person reads in the element, less its buttons and icons, and less the headings inside
 * it when it says more than them (a dialog's "Login Failed" above "You entered an incorrect
 * password"); none when it has no word (a required-field "*", an icon's glyph).
 */
function messageText(element: Element, context: PageContext): string {
  const unread = (inner: Element) => inner.name === "button" || inner.attribs.role === "button" || unseen.has(inner.name) || isUnread(inner);
  const body = textOf(element, new Set(), (inner) => unread(inner) || (inner !== element && context.titles.has(inner)));
  const text = hasWords(body) ? body : textOf(element, new Set(), unread);
  return hasWords(text) ? text : "";
}

function hasWords(text: string): boolean {
  return /\p{L}{2}/u.test(text);
}

/**
 * An icon: an icon element (`<mat-icon>`, `<ion-icon>`), or an `<i>` or `<span>` of an icon font,
 * whose text, if any, is one word naming the glyph ("error", "warning").
 */
function isIcon(element: Element): boolean {
  const iconElement = /(^|-)icon$/.test(element.name) || ((element.name === "i" || element.name === "span") && markerNames(element).some((name) => iconMarker.test(name)));
  return iconElement && !/\s/.test(textOf(element));
}

function containsFields(element: Element): boolean {
  return DomUtils.existsOne(
    (node) => node.name === "form" || node.name === "select" || node.name === "textarea" || (node.name === "input" && !["hidden", "submit", "button", "image", "reset"].includes((node.attribs.type ?? "text").toLowerCase())),
    element.children,
  );
}

function markerNames(element: Element): string[] {
  return [...(element.attribs.class ?? "").toLowerCase().split(/\s+/), (element.attribs.id ?? "").toLowerCase()].filter(Boolean);
}

/** Hidden by markup, or by what a message's text is not: a closed dialog, a hidden input, a class that hides it or keeps it for screen readers. */
function isUnread(element: Element): boolean {
  const attribs = element.attribs;
  return (
    isHidden(element) ||
    (attribs.type ?? "").toLowerCase() === "hidden" ||
    (element.name === "dialog" && !("open" in attribs)) ||
    isIcon(element) ||
    (attribs.class ?? "").toLowerCase().split(/\s+/).some((name) => hiddenMarker.test(name))
  );
}

/** Site-wide header, navigation and footer, and cookie banners: never where a login's message is. */
function isChrome(element: Element): boolean {
  if (element.name === "nav" || chromeRoles.has(element.attribs.role ?? "")) return true;
  if (markerNames(element).some((name) => chromeMarker.test(name))) return true;
  if (element.name !== "header" && element.name !== "footer") return false;
  for (let node = parentElement(element); node; node = parentElement(node)) if (sectioning.has(node.name)) return false;
  return true;
}

function shorten(text: string): string {
  return text.length <= maxReportedLength ? text : `${text.slice(0, maxReportedLength - 1).trimEnd()}…`;
}
