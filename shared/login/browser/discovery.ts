import type { Element } from "domhandler";
import { DomUtils } from "htmlparser2";
import type { Page } from "playwright-core";
import { primarySubmit } from "../choices.ts";
import { cssSelector, isFillable } from "../fields.ts";
import { analyzeStep, signInLinkRank, type LoginStep } from "../forms.ts";
import { isConcealed, parsePage, textOf, xpathOf, type Control, type Form, type PageModel } from "../page.ts";
import { siteMessages, type SiteMessage } from "../site-message.ts";
import type { MfaType } from "../types.ts";
import { refAttribute, snapshotDom } from "./dom-snapshot.ts";

/**
 * The login step the rendered page shows, found by the HTTP engine's own analysis run on a snapshot
 * of the live DOM (dom-snapshot.ts), with every selector of the prompt turned into one that finds
 * the element in the live page, and the refs of the elements to fill and press.
 */

/** Live elements of a step, by ref (see `refAttribute`). */
export interface StepTargets {
  /** Field id -> the input. */
  fields: Record<string, string>;
  /** Choice id -> the element to press, and for a radio the button that sends it. */
  choices: Record<string, { ref: string; submitRef: string | null }>;
  /** The button that sends the fields; null where only Enter does. */
  submitRef: string | null;
}

export interface Discovery {
  model: PageModel;
  /** The snapshot, for the checks that read markup (a password input). */
  html: string;
  step: LoginStep | null;
  targets: StepTargets;
  messages: SiteMessage[];
}

const snapshotAttempts = 3;
/** A button outside a real form that sends it: its words say so. */
const proceedWords = /^(?:sign ?in|log ?in|login|continue|next|submit|verify|confirm|send|go|ok|done)\b/i;
const dismissWords = /^(?:cancel|back|close|skip|not now|no thanks)$/i;
const clickableRoles = new Set(["button", "link"]);

/** Counts snapshots per process, so that refs of different snapshots never collide. */
let rounds = 0;

/**
 * Snapshots the page and analyses it; `secrets` are what was typed, never to be echoed in a message.
 * `servedHtml` is what the site served for the document, which tells the text its script drew.
 */
export async function discover(page: Page, chosenMfa: MfaType | null, secrets: readonly string[], servedHtml: string | null = null): Promise<Discovery> {
  const snapshot = await snapshotSteadily(page);
  const model = parsePage(snapshot.html, page.url());
  const found = analyzeStep(model, chosenMfa);
  const live = (ref: string | undefined) => (ref === undefined ? null : (snapshot.selectors[ref] ?? `[${refAttribute}="${ref}"]`));
  const targets: StepTargets = { fields: {}, choices: {}, submitRef: null };
  let step: LoginStep | null = null;
  if (found) {
    const prompt = structuredClone(found.prompt);
    const fieldForm = formOfFields(model, found);
    prompt.fields.forEach((field, index) => {
      const control = fieldForm?.controls.find((candidate) => isFillable(candidate) && cssSelector(candidate) === field.observed_selector);
      const ref = control?.element.attribs[refAttribute];
      if (ref === undefined) return;
      targets.fields[field.id] = ref;
      field.observed_selector = live(ref);
      prompt.discovered_fields[index]!.selector = live(ref)!;
    });
    targets.submitRef = (fieldForm && sendingButton(fieldForm)?.element.attribs[refAttribute]) ?? null;
    const byXpath = elementsByXpath(model);
    const liveChoiceSelectors = new Map<string, string>();
    for (const choice of prompt.choices) {
      const element = choice.observed_selector ? byXpath.get(choice.observed_selector) : undefined;
      const ref = element?.attribs[refAttribute];
      if (!element || ref === undefined) continue;
      const radioForm = element.attribs.type === "radio" ? model.forms.find((form) => form.controls.some((control) => control.element === element)) : undefined;
      targets.choices[choice.id] = { ref, submitRef: (radioForm && sendingButton(radioForm)?.element.attribs[refAttribute]) ?? null };
      liveChoiceSelectors.set(choice.observed_selector!, live(ref)!);
      choice.observed_selector = live(ref);
    }
    for (const button of prompt.pending_sso_buttons) button.selector = liveChoiceSelectors.get(button.selector) ?? button.selector;
    step = { prompt, plan: found.plan, asksLogin: found.asksLogin };
  }
  return { model, html: snapshot.html, step, targets, messages: siteMessages(model, secrets, servedHtml === null ? {} : { servedHtml }) };
}

/** What a person could press to get to the login: visible links and buttons that offer to sign in, best first. */
export function signInControls(model: PageModel, inScope: (url: URL) => boolean): Array<{ ref: string; href: string | null }> {
  const candidates = DomUtils.findAll(
    (element) => element.attribs[refAttribute] !== undefined && (element.name === "a" || element.name === "button" || clickableRoles.has(element.attribs.role ?? "")),
    model.document.children,
  );
  return candidates
    .filter((element) => !isConcealed(element))
    .map((element) => {
      const text = textOf(element) || element.attribs["aria-label"] || element.attribs.title || "";
      const href = element.name === "a" ? followableHref(element, model.url, inScope) : null;
      return { ref: element.attribs[refAttribute]!, href, rank: signInLinkRank({ href: href ?? "about:blank", text }) };
    })
    .filter((candidate) => candidate.rank > 0)
    .sort((a, b) => b.rank - a.rank)
    .map(({ ref, href }) => ({ ref, href }));
}

/** A link's address worth loading instead of clicking: another page, on the login's sites. */
function followableHref(element: Element, pageUrl: string, inScope: (url: URL) => boolean): string | null {
  try {
    const url = new URL(element.attribs.href ?? "");
    url.hash = "";
    const current = new URL(pageUrl);
    current.hash = "";
    return (url.protocol === "http:" || url.protocol === "https:") && url.href !== current.href && inScope(url) ? url.href : null;
  } catch {
    return null;
  }
}

/** The form whose controls the step's fields are: several forms may share a field's name. */
function formOfFields(model: PageModel, step: LoginStep): Form | null {
  if (step.prompt.fields.length === 0) return null;
  return (
    model.forms.find((form) =>
      step.prompt.fields.every((field) => form.controls.some((control) => isFillable(control) && cssSelector(control) === field.observed_selector)),
    ) ?? null
  );
}

/**
 * The button a person presses to send `form`: its submit button, or in a form that script sends, the
 * one plain button that says it proceeds (or the only one).
 */
function sendingButton(form: Form): Control | null {
  const submit = primarySubmit(form);
  if (submit) return submit;
  const buttons = form.controls.filter(
    (control) => (control.tag === "button" || control.type === "button") && !control.disabled && !control.concealed && !dismissWords.test(control.lines.join(" ")),
  );
  const labelled = (control: Control) => control.lines.join(" ") || control.value || control.element.attribs["aria-label"] || "";
  return buttons.find((control) => proceedWords.test(labelled(control))) ?? (buttons.length === 1 ? buttons[0]! : null);
}

function elementsByXpath(model: PageModel): Map<string, Element> {
  const elements = [
    ...model.forms.flatMap((form) => form.controls.map((control) => control.element)),
    ...model.links.map((link) => link.element),
    ...model.pressables.map((pressable) => pressable.element),
  ];
  return new Map(elements.map((element) => [xpathOf(element), element]));
}

/** A snapshot taken while the page navigates fails: the new page is snapshotted once it has loaded. */
async function snapshotSteadily(page: Page) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await snapshotDom(page, rounds++);
    } catch (error) {
      if (attempt >= snapshotAttempts || page.isClosed()) throw error;
      await page.waitForLoadState("load").catch(() => undefined);
    }
  }
}
