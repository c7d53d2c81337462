import { isTag, isText, type AnyNode, type Document, type Element } from "domhandler";
import { DomUtils, parseDocument } from "htmlparser2";

/** An HTML page reduced to what a login needs: its forms and controls, links, and the signals around them. */

export interface Control {
  tag: "input" | "select" | "textarea" | "button";
  /** Lower-cased `type`; `text` for an input without one, `submit` for a button without one. */
  type: string;
  name: string;
  value: string;
  id: string;
  autocomplete: string;
  inputmode: string;
  placeholder: string;
  /** `<label for>`, a wrapping label, aria-labelledby or aria-label, whichever the page gives. */
  label: string;
  /** A button's text in lines: "Acme Corp<br><small>ada@acme.example</small>" gives two; an icon's accessible name (aria-label, title, image alt) when it has none. */
  lines: string[];
  required: boolean;
  readonly: boolean;
  disabled: boolean;
  checked: boolean;
  /** Hidden from people by markup (a honeypot, or an inactive step): never asked, sent as it is. */
  concealed: boolean;
  /** A search box: `type="search"`, inside a `role="search"` landmark, or named or labelled "Search"; never a login's field. */
  searchBox: boolean;
  maxLength: number | null;
  element: Element;
}

export interface Form {
  index: number;
  action: string;
  method: "GET" | "POST";
  /** id, name, class, role and action, for telling a login form from a search or sign-up form. */
  identity: string;
  text: string;
  controls: Control[];
  element: Element;
}

export interface Link {
  href: string;
  text: string;
  element: Element;
}

/**
 * Something a person presses that only the page's script acts on: an `<a>` without an address to
 * follow, a `<button type="button">` or a button outside any form, an element with role=button or
 * role=link. `name` is what it says to a person: its text, else its aria-label, aria-labelledby,
 * title or an image's alt.
 */
export interface Pressable {
  name: string;
  element: Element;
}

export interface PageModel {
  url: string;
  title: string;
  /** The visible text outside header, nav and footer. */
  text: string;
  /** The texts of the page's paragraphs, where instructions ("We sent a code to ...") are. */
  paragraphs: string[];
  forms: Form[];
  links: Link[];
  pressables: Pressable[];
  captcha: boolean;
  /** The page draws on a `<canvas>`: what it shows there has no text to read. */
  drawsOnCanvas: boolean;
  /** The parsed page, for readers that need more than this summary (the site's own messages: site-message.ts). */
  document: Document;
  /** A sign-out link or button: the page belongs to a signed-in session. */
  hasSignOut: boolean;
  /** Literal `localStorage.setItem("k", "v")` calls in inline scripts. */
  localStorage: Array<{ name: string; value: string }>;
  /** Where a `<meta http-equiv="refresh">` of a few seconds at most sends the browser. */
  refreshUrl: string | null;
  /** A script or `onload` submits a form by itself (SAML and OIDC form_post hand-offs do). */
  submitsByScript: boolean;
}

/** Roles of elements that are pressed, whatever their tag: a `<div role="button">`. */
const pressableRoles = new Set(["button", "link"]);
const skippedText = new Set(["script", "style", "noscript", "template", "head", "select", "option"]);
const chromeElements = new Set(["header", "nav", "footer"]);
const lineBreaking = new Set(["br", "div", "p", "small", "li", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol"]);
const captchaClasses = new Set(["g-recaptcha", "h-captcha", "cf-turnstile", "frc-captcha"]);
const captchaSources = /recaptcha|hcaptcha|turnstile|challenges\.cloudflare\.com|arkoselabs|funcaptcha/i;
const captchaWords = /verify (that )?you are (a )?human|i'?m not a robot|complete the captcha|solve the captcha/i;
/** What a search box is called, by its name, id, label or placeholder, in the languages sites commonly use. */
const searchWords = /search|\b(?:suche|suchen|recherche|rechercher|buscar|b[úu]squeda|cerca|zoeken|szukaj|s[öo]k)\b|поиск|検索|搜索/i;
/** A sign-out control's words, in the languages sites commonly use. */
export const signOutWords =
  /\b(?:sign[ -]?out|log[ -]?(?:out|off)|sign[ -]?off|abmelden|ausloggen|uitloggen|afmelden|wyloguj|logga ut|log ud|logg ut|kirjaudu ulos|disconnetti)\b|d[ée]connexion|se d[ée]connecter|cerrar sesi[óo]n|(?:terminar|encerrar) sess[ãa]o|odhl[áa]sit|выйти|выход|ログアウト|登出|退出登录|注销/i;
/** A sign-out address or form name: `/logout`, `/users/sign_out`, `Special:UserLogout`, `logout-form`. */
export const signOutAddress = /log[-_]?out|sign[-_]?out|log[-_]?off|sign[-_]?off|abmelden/i;
const scriptSubmit = /\.submit\(\s*\)/;
const metaRefresh = /^\s*(\d+)(?:\.\d*)?\s*[;,]\s*url\s*=\s*(\S.*?)\s*$/i;
const maxRefreshSeconds = 5;
const localStorageWrite = /localStorage\s*\.\s*setItem\s*\(\s*(["'])((?:\\.|(?!\1)[^\\])*)\1\s*,\s*(["'])((?:\\.|(?!\3)[^\\])*)\3\s*\)/g;

export function parsePage(html: string, url: string): PageModel {
  const document = parseDocument(html);
  const elements = DomUtils.findAll(() => true, document.children);
  const labelsFor = new Map<string, string>();
  const byId = new Map<string, Element>();
  for (const element of elements) {
    const id = element.attribs.id;
    if (id && !byId.has(id)) byId.set(id, element);
    if (element.name === "label" && element.attribs.for) labelsFor.set(element.attribs.for, textOf(element));
  }

  const forms: Form[] = [];
  const formOf = new Map<Element, Form>();
  const links: Link[] = [];
  const pressables: Pressable[] = [];
  const pressable = (element: Element) => {
    if (!isConcealed(element)) pressables.push({ name: accessibleName(element, byId), element });
  };
  const localStorage: PageModel["localStorage"] = [];
  let captcha = false;
  let hasSignOut = false;
  let refreshUrl: string | null = null;
  let submitsByScript = false;
  let drawsOnCanvas = false;

  for (const element of elements) {
    const classes = (element.attribs.class ?? "").toLowerCase().split(/\s+/);
    if (classes.some((name) => captchaClasses.has(name))) captcha = true;
    if ((element.name === "script" || element.name === "iframe") && captchaSources.test(element.attribs.src ?? "")) captcha = true;
    if (element.name === "script" && !element.attribs.src) {
      const script = DomUtils.textContent(element);
      for (const match of script.matchAll(localStorageWrite)) {
        localStorage.push({ name: unescapeJs(match[2]!), value: unescapeJs(match[4]!) });
      }
      if (scriptSubmit.test(script)) submitsByScript = true;
    }
    if (scriptSubmit.test(element.attribs.onload ?? "")) submitsByScript = true;
    if (element.name === "meta" && (element.attribs["http-equiv"] ?? "").toLowerCase() === "refresh" && refreshUrl === null) {
      const refresh = metaRefresh.exec(element.attribs.content ?? "");
      if (refresh && Number(refresh[1]) <= maxRefreshSeconds) refreshUrl = resolveUrl(refresh[2]!.replace(/^["']|["']$/g, ""), url);
    }
    switch (element.name) {
      case "canvas":
        drawsOnCanvas = true;
        break;
      case "form": {
        const form: Form = {
          index: forms.length,
          action: resolveUrl(element.attribs.action, url) ?? url,
          method: (element.attribs.method ?? "get").toLowerCase() === "post" ? "POST" : "GET",
          identity: ["id", "name", "class", "role", "action"].map((name) => element.attribs[name] ?? "").join(" ").toLowerCase(),
          text: textOf(element),
          controls: [],
          element,
        };
        forms.push(form);
        formOf.set(element, form);
        if (signOutAddress.test(form.identity)) hasSignOut = true;
        break;
      }
      case "a": {
        const href = resolveUrl(element.attribs.href, url);
        const text = accessibleName(element, byId);
        if (href && !href.startsWith("javascript:")) links.push({ href, text, element });
        if (!href || href.startsWith("javascript:") || isFragmentOnly(element)) pressable(element);
        if (signOutWords.test(text) || signOutAddress.test(element.attribs.href ?? "")) hasSignOut = true;
        break;
      }
      case "input":
      case "select":
      case "textarea":
      case "button": {
        const control = readControl(element, labelsFor, byId);
        const owner = element.attribs.form ? byId.get(element.attribs.form) : ancestor(element, "form");
        const form = owner ? formOf.get(owner) : undefined;
        // A button outside any form only does something with script, which this engine does not run.
        if (form) form.controls.push(control);
        const isButton = element.name === "button" || ["submit", "button", "image"].includes(control.type);
        if (isButton && (!form || control.type === "button")) pressable(element);
        if (["submit", "button"].includes(control.type) && signOutWords.test(control.lines.join(" ") || (element.attribs["aria-label"] ?? ""))) hasSignOut = true;
        break;
      }
      default:
        if (pressableRoles.has((element.attribs.role ?? "").toLowerCase())) pressable(element);
    }
  }

  const text = textOf(document, chromeElements);
  const paragraphs = elements.filter((element) => element.name === "p").map((element) => textOf(element)).filter(Boolean);
  if (captchaWords.test(text)) captcha = true;
  const titleElement = DomUtils.findOne((element) => element.name === "title", document.children);
  const title = titleElement ? textOf(titleElement) : "";
  return { url, title, text, paragraphs, forms, links, pressables, captcha, drawsOnCanvas, document, hasSignOut, localStorage, refreshUrl, submitsByScript };
}

/** An `<a href="#...">`: a link to where the page already is, which script usually acts on. */
export function isFragmentOnly(element: Element): boolean {
  return (element.attribs.href ?? "").trim().startsWith("#");
}

/** What an element says to a person: its text, else its aria-label, aria-labelledby, title or the alt of an image in it. */
function accessibleName(element: Element, byId: Map<string, Element>): string {
  const labelledBy = (element.attribs["aria-labelledby"] ?? "")
    .split(/\s+/)
    .flatMap((id) => (byId.has(id) ? [textOf(byId.get(id)!)] : []))
    .join(" ");
  const image = DomUtils.findOne((child) => child.name === "img" && Boolean(child.attribs.alt), element.children);
  return textOf(element) || collapse(element.attribs["aria-label"] ?? "") || collapse(labelledBy) || collapse(element.attribs.title ?? "") || collapse(image?.attribs.alt ?? "");
}

function readControl(element: Element, labelsFor: Map<string, string>, byId: Map<string, Element>): Control {
  const attribs = element.attribs;
  const tag = element.name as Control["tag"];
  const type = (attribs.type ?? (tag === "button" ? "submit" : tag === "input" ? "text" : tag)).toLowerCase();
  const labelledBy = (attribs["aria-labelledby"] ?? "")
    .split(/\s+/)
    .map((id) => byId.get(id))
    .filter((labelElement): labelElement is Element => labelElement !== undefined)
    .map((labelElement) => textOf(labelElement))
    .join(" ");
  const wrappingLabel = ancestor(element, "label");
  const label = (attribs.id ? labelsFor.get(attribs.id) : undefined) || (wrappingLabel ? textOf(wrappingLabel) : "") || labelledBy || attribs["aria-label"] || "";
  const maxLength = Number.parseInt(attribs.maxlength ?? "", 10);
  const lines = tag === "button" ? linesOf(element) : attribs.value ? [collapse(attribs.value)] : [];
  const isButton = tag === "button" || ["submit", "button", "image", "reset"].includes(type);
  const named = lines.length === 0 && isButton ? accessibleName(element, byId) : "";
  const searchBox =
    type === "search" ||
    searchWords.test([attribs.name, attribs.id, label, attribs.placeholder, attribs.title].join(" ")) ||
    ancestorWhere(element, (node) => node.attribs.role === "search") !== null;
  return {
    tag,
    type,
    name: attribs.name ?? "",
    value: tag === "select" ? selectedOption(element) : tag === "textarea" ? DomUtils.textContent(element) : (attribs.value ?? ""),
    id: attribs.id ?? "",
    autocomplete: (attribs.autocomplete ?? "").toLowerCase(),
    inputmode: (attribs.inputmode ?? "").toLowerCase(),
    placeholder: attribs.placeholder ?? "",
    label: collapse(label),
    lines: named ? [named] : lines,
    required: "required" in attribs || attribs["aria-required"] === "true",
    readonly: "readonly" in attribs,
    disabled: "disabled" in attribs,
    checked: "checked" in attribs,
    concealed: isConcealed(element),
    searchBox,
    maxLength: Number.isNaN(maxLength) ? null : maxLength,
    element,
  };
}

function selectedOption(select: Element): string {
  const options = DomUtils.findAll((element) => element.name === "option", select.children);
  const chosen = options.find((option) => "selected" in option.attribs) ?? options[0];
  return chosen ? (chosen.attribs.value ?? collapse(DomUtils.textContent(chosen))) : "";
}

export function isConcealed(element: Element): boolean {
  for (let node: Element | null = element; node; node = parentElement(node)) if (isHidden(node)) return true;
  return false;
}

/** The element itself is hidden by its markup (its ancestors are the caller's to look at). */
export function isHidden(element: Element): boolean {
  const attribs = element.attribs;
  const style = (attribs.style ?? "").replace(/\s/g, "").toLowerCase();
  return "hidden" in attribs || attribs["aria-hidden"] === "true" || style.includes("display:none") || style.includes("visibility:hidden");
}

/**
 * Whitespace-collapsed visible text; `skip` names elements whose text is left out (site chrome),
 * `skipElement` leaves out any other element it returns true for.
 */
export function textOf(node: AnyNode, skip: ReadonlySet<string> = new Set(), skipElement?: (element: Element) => boolean): string {
  const parts: string[] = [];
  const walk = (current: AnyNode) => {
    if (isText(current)) parts.push(current.data);
    else if (isTag(current)) {
      if (skip.has(current.name) || skippedText.has(current.name) || "hidden" in current.attribs || skipElement?.(current)) return;
      if (lineBreaking.has(current.name)) parts.push(" ");
      current.children.forEach(walk);
      if (lineBreaking.has(current.name)) parts.push(" ");
    } else if ("children" in current) (current.children as AnyNode[]).forEach(walk);
  };
  walk(node);
  return collapse(parts.join(""));
}

function linesOf(element: Element): string[] {
  const lines: string[] = [""];
  const walk = (node: AnyNode) => {
    if (isText(node)) lines[lines.length - 1] += node.data;
    else if (isTag(node) && !skippedText.has(node.name)) {
      if (lineBreaking.has(node.name)) lines.push("");
      node.children.forEach(walk);
      if (lineBreaking.has(node.name)) lines.push("");
    }
  };
  element.children.forEach(walk);
  return lines.map(collapse).filter(Boolean);
}

/**
 * An XPath that finds the element again on a fresh load of the page, in a browser too: by name and
 * value for a form control, by its text for a link or button (attribute values such as an SSO
 * link's `state` change per visit), by position otherwise. htmlparser2 builds no implied
 * html/body/tbody elements, so a positional path is the last resort.
 */
export function xpathOf(element: Element): string {
  const root = rootOf(element);
  const text = textOf(element);
  const name = element.attribs.name;
  let expression: string | null = null;
  if (name !== undefined && isQuotable(name) && isQuotable(element.attribs.value ?? "")) {
    expression = `//${element.name}[@name="${name}"]${element.attribs.value === undefined ? "" : `[@value="${element.attribs.value}"]`}`;
  } else if (text && isQuotable(text)) expression = `//${element.name}[normalize-space()="${text}"]`;
  if (expression === null) return positionalXpath(element);
  const same = DomUtils.findAll((candidate) => candidate.name === element.name && matches(candidate, element, text), root);
  return same.length > 1 ? `(${expression})[${same.indexOf(element) + 1}]` : expression;
}

function matches(candidate: Element, element: Element, text: string): boolean {
  if (element.attribs.name !== undefined) return candidate.attribs.name === element.attribs.name && candidate.attribs.value === element.attribs.value;
  return textOf(candidate) === text;
}

function isQuotable(text: string): boolean {
  return !text.includes('"');
}

function positionalXpath(element: Element): string {
  const steps: string[] = [];
  for (let node: Element | null = element; node; node = parentElement(node)) {
    const siblings = (node.parent?.children ?? []).filter((sibling): sibling is Element => isTag(sibling) && sibling.name === node!.name);
    steps.unshift(`${node.name}[${siblings.indexOf(node) + 1}]`);
  }
  return `/${steps.join("/")}`;
}

function rootOf(element: Element): AnyNode[] {
  let node: AnyNode = element;
  while (node.parent) node = node.parent;
  return "children" in node ? (node.children as AnyNode[]) : [node];
}

function resolveUrl(href: string | undefined, base: string): string | null {
  if (href === undefined) return null;
  try {
    const url = new URL(href.trim(), base);
    url.hash = "";
    return url.href;
  } catch {
    return null;
  }
}

export function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function ancestor(element: Element, name: string): Element | null {
  return ancestorWhere(element, (node) => node.name === name);
}

function ancestorWhere(element: Element, test: (node: Element) => boolean): Element | null {
  for (let node = parentElement(element); node; node = parentElement(node)) if (test(node)) return node;
  return null;
}

export function parentElement(element: Element): Element | null {
  return element.parent && isTag(element.parent) ? element.parent : null;
}

export function unescapeJs(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_, escape: string) => {
    if (escape.length > 1) return String.fromCharCode(Number.parseInt(escape.slice(1), 16));
    return ({ n: "\n", t: "\t", r: "\r" } as Record<string, string>)[escape] ?? escape;
  });
}
