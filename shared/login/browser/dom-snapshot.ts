import type { Page } from "playwright-core";

/**
 * The rendered page as HTML that the HTTP engine's parser reads (page.ts): open shadow roots and
 * same-origin iframes flattened in, what is not rendered marked `hidden`, controls outside any
 * `<form>` wrapped in a synthetic one, and each control, link and button marked in the LIVE page
 * with `refAttribute`, which the snapshot keeps, so an analysis of the snapshot maps back to the
 * elements to fill and press.
 */

export const refAttribute = "data-acs-ref";

export interface DomSnapshot {
  html: string;
  /** For each ref: a CSS selector that finds the element in the live page (Playwright's CSS pierces open shadow roots). */
  selectors: Record<string, string>;
}

/** Marks and serialises the page; `round` keeps refs of different snapshots apart. */
export async function snapshotDom(page: Page, round: number): Promise<DomSnapshot> {
  return page.evaluate(serializeRenderedDom, { refAttribute, round: `r${round}` });
}

/**
 * The page globals the in-page function reads; the project compiles without the DOM library, so
 * only what it uses is declared, structurally.
 */
interface LiveNode {
  readonly nodeType: number;
  readonly nodeValue: string | null;
  readonly childNodes: ArrayLike<LiveNode>;
}
interface LiveElement extends LiveNode {
  readonly localName: string;
  readonly namespaceURI: string | null;
  readonly attributes: ArrayLike<{ name: string; value: string }>;
  readonly shadowRoot: LiveNode | null;
  readonly baseURI: string;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  checkVisibility?(options: { visibilityProperty: boolean; contentVisibilityAuto: boolean }): boolean;
  assignedNodes?(): LiveNode[];
  contentDocument?: { documentElement: LiveElement | null } | null;
  checked?: boolean;
  disabled?: boolean;
  selected?: boolean;
  type?: string;
}
declare const document: { documentElement: LiveElement };
declare function getComputedStyle(element: LiveElement): { display: string };

/** Runs in the page: it may use nothing from this module (Playwright sends its source). */
function serializeRenderedDom({ refAttribute, round }: { refAttribute: string; round: string }): DomSnapshot {
  interface Built {
    tag: string;
    attrs: Array<[string, string]>;
    children: Array<Built | string>;
    parent: Built | null;
    /** A real `<form>`, or a subtree that holds one. */
    holdsForm: boolean;
    kind: "fillable" | "button" | "other";
    /** Under a real form, or tied to one by a `form` attribute. */
    owned: boolean;
    chrome: boolean;
    /** An input with neither name nor id: what it is (type, autocomplete), for the name that stands in. */
    nameless?: string;
  }
  const elementNode = 1;
  const textNode = 3;
  const dropped = new Set(["script", "style", "noscript", "template", "link", "meta", "base", "svg", "math"]);
  const voidTags = new Set(["area", "br", "col", "embed", "hr", "img", "input", "source", "track", "wbr"]);
  const marked = new Set(["input", "select", "textarea", "button", "a"]);
  const clickableRoles = new Set(["button", "link", "radio", "option", "menuitem", "tab"]);
  const chromeTags = new Set(["header", "nav", "footer"]);
  const chromeRoles = new Set(["banner", "navigation", "contentinfo", "search"]);
  // Typed values stay out of the snapshot: the analysis never needs them, and some are secrets.
  const typedInputs = new Set(["", "text", "email", "password", "tel", "number", "url", "search"]);
  const simpleId = /^[A-Za-z][\w-]*$/;
  const idCount = new Map<string, number>();
  const nameCount = new Map<string, number>();
  const preferred = new Map<string, { id: string | null; name: string | null; topDocument: boolean }>();
  let counter = 0;

  const absolute = (value: string, base: string): string => {
    try {
      return new URL(value, base).href;
    } catch {
      return value;
    }
  };
  const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  const isRendered = (element: LiveElement): boolean => {
    if (!element.checkVisibility || element.checkVisibility({ visibilityProperty: true, contentVisibilityAuto: true })) return true;
    // `display: contents` has no box of its own, yet its children render.
    return getComputedStyle(element).display === "contents";
  };

  const build = (element: LiveElement, parent: Built | null, topDocument: boolean, parentHidden: boolean): Built | null => {
    const tag = element.localName;
    if (dropped.has(tag)) return null;
    const role = element.getAttribute("role") ?? "";
    const type = (element.getAttribute("type") ?? "").toLowerCase();
    const hidden = parentHidden || (tag !== "option" && tag !== "optgroup" && !(tag === "input" && type === "hidden") && !isRendered(element));
    let ref: string | null = null;
    if (marked.has(tag) || clickableRoles.has(role)) {
      ref = element.getAttribute(refAttribute);
      if (!ref) {
        ref = `${round}-${counter++}`;
        element.setAttribute(refAttribute, ref);
      }
      const id = element.getAttribute("id");
      const name = element.getAttribute("name");
      preferred.set(ref, { id: id && simpleId.test(id) ? id : null, name: name ? `${tag}[name="${name.replace(/["\\]/g, "\\$&")}"]` : null, topDocument });
    }
    if (topDocument) {
      const id = element.getAttribute("id");
      const name = element.getAttribute("name");
      if (id) count(idCount, id);
      if (name) count(nameCount, `${tag}[name="${name.replace(/["\\]/g, "\\$&")}"]`);
    }
    const attrs: Array<[string, string]> = [];
    for (const { name, value } of Array.from(element.attributes)) {
      if (name.startsWith("on") || name === "hidden" || name === "checked" || name === "selected" || name === "disabled") continue;
      if (name === "value" && ((tag === "input" && typedInputs.has(type)) || tag === "textarea")) continue;
      if ((name === "href" && tag === "a") || (name === "action" && tag === "form") || (name === "src" && tag === "iframe")) attrs.push([name, absolute(value, element.baseURI)]);
      else attrs.push([name, value]);
    }
    // Script-driven inputs often have no name, which a form needs to send them: the id stands in, or else a name given below.
    const nameless = tag === "input" && !element.getAttribute("name");
    if (nameless && element.getAttribute("id")) attrs.push(["name", element.getAttribute("id")!]);
    if (hidden && !parentHidden) attrs.push(["hidden", ""]);
    if (element.checked === true && (type === "radio" || type === "checkbox")) attrs.push(["checked", ""]);
    if (element.selected === true && tag === "option") attrs.push(["selected", ""]);
    if (element.disabled === true) attrs.push(["disabled", ""]);
    const chrome = chromeTags.has(tag) || chromeRoles.has(role);
    const kind = tag === "select" || tag === "textarea" || (tag === "input" && !["hidden", "submit", "button", "image", "reset"].includes(type))
      ? "fillable"
      : tag === "button" || (tag === "input" && ["submit", "button", "image"].includes(type))
        ? "button"
        : "other";
    const node: Built = { tag, attrs, children: [], parent, holdsForm: tag === "form", kind, owned: (parent?.owned ?? false) || tag === "form" || element.getAttribute("form") !== null, chrome };
    if (nameless && !element.getAttribute("id")) node.nameless = [type || "text", element.getAttribute("autocomplete") ?? ""].filter(Boolean).join("-");
    if (tag === "head") {
      // Of the head, only the title speaks to the analysis.
      for (const child of Array.from(element.childNodes)) {
        if (child.nodeType === elementNode && (child as LiveElement).localName === "title") {
          node.children.push({ tag: "title", attrs: [], children: [(child as LiveElement).childNodes[0]?.nodeValue ?? ""], parent: node, holdsForm: false, kind: "other", owned: false, chrome: false });
        }
      }
      return node;
    }
    if (tag === "iframe") {
      let inner: LiveElement | null = null;
      try {
        inner = element.contentDocument?.documentElement ?? null;
      } catch {
        inner = null;
      }
      const src = element.getAttribute("src") ?? "";
      // An invisible captcha (reCAPTCHA v3, invisible hCaptcha) scores without asking anything: only a visible one blocks.
      if (!inner && (hidden || /size=invisible/.test(src))) return null;
      if (inner) {
        const frame = build(inner, node, false, hidden);
        if (frame) node.children.push(...frame.children);
        node.tag = "div";
        node.attrs = [["data-acs-frame", ""], ...(hidden ? ([["hidden", ""]] as Array<[string, string]>) : [])];
      }
      return node;
    }
    const slotted = tag === "slot" && element.assignedNodes ? element.assignedNodes() : [];
    const childNodes = element.shadowRoot ? element.shadowRoot.childNodes : slotted.length > 0 ? slotted : element.childNodes;
    for (const child of Array.from(childNodes)) {
      if (child.nodeType === textNode) node.children.push(child.nodeValue ?? "");
      else if (child.nodeType === elementNode && (child as LiveElement).namespaceURI === "http://www.w3.org/1999/xhtml") {
        const built = build(child as LiveElement, node, topDocument, hidden);
        if (built) {
          node.children.push(built);
          if (built.holdsForm) node.holdsForm = true;
        }
      }
    }
    return node;
  };

  const root = build(document.documentElement, null, true, false)!;

  // Controls outside any form, grouped by the highest container that holds no real form (page chrome is a border too).
  const groups = new Map<Built, Built[]>();
  const visit = (node: Built) => {
    if (node.kind !== "other" && !node.owned) {
      let top = node;
      while (top.parent && !top.parent.holdsForm && !top.chrome) top = top.parent;
      groups.set(top, [...(groups.get(top) ?? []), node]);
    }
    for (const child of node.children) if (typeof child !== "string") visit(child);
  };
  visit(root);
  const ancestors = (node: Built): Built[] => {
    const chain: Built[] = [];
    for (let current: Built | null = node; current; current = current.parent) chain.unshift(current);
    return chain;
  };
  const holdsAny = (node: Built, members: Built[]) => members.some((member) => ancestors(member).includes(node));
  for (const [top, members] of groups) {
    const fillables = members.filter((member) => member.kind === "fillable");
    // Buttons alone are not a form to fill: wrapping them would offer every toolbar as a choice.
    if (fillables.length === 0) continue;
    const chains = fillables.map(ancestors);
    let lowest = chains[0]![0]!;
    for (let depth = 0; chains.every((chain) => chain[depth] !== undefined && chain[depth] === chains[0]![depth]); depth++) lowest = chains[0]![depth]!;
    if (lowest.kind !== "other" && lowest.parent) lowest = lowest.parent;
    // Widen a little to take in the button that sends the fields, which often sits beside their container.
    const buttons = members.filter((member) => member.kind === "button");
    for (let level = 0; level < 3 && lowest !== top && lowest.parent && !buttons.some((button) => holdsAny(lowest, [button])); level++) lowest = lowest.parent;
    const form: Built = { tag: "form", attrs: [["data-acs-synthetic", ""], ["method", "post"]], children: lowest.children, parent: lowest, holdsForm: true, kind: "other", owned: true, chrome: false };
    for (const child of form.children) if (typeof child !== "string") child.parent = form;
    lowest.children = [form];
  }

  // The name of an input with neither name nor id says what it is and where it sits among its form's
  // fields, never anything of this snapshot's: a form that script draws again (new elements, the same
  // fields) is then the same step, as a rejected password shown again must be.
  const nameNameless = (node: Built, form: { fields: number }) => {
    for (const child of node.children) {
      if (typeof child === "string") continue;
      const within = child.tag === "form" ? { fields: 0 } : form;
      if (child.kind === "fillable") {
        const position = within.fields++;
        if (child.nameless !== undefined) child.attrs.push(["name", `${child.nameless}-${position}`]);
      }
      nameNameless(child, within);
    }
  };
  nameNameless(root, { fields: 0 });

  const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const escapeAttribute = (text: string) => text.replace(/&/g, "&amp;").replace(/"/g, "&quot;");
  const emit = (node: Built | string): string => {
    if (typeof node === "string") return escapeText(node);
    const attributes = node.attrs.map(([name, value]) => (value === "" ? ` ${name}` : ` ${name}="${escapeAttribute(value)}"`)).join("");
    if (voidTags.has(node.tag)) return `<${node.tag}${attributes}>`;
    return `<${node.tag}${attributes}>${node.children.map(emit).join("")}</${node.tag}>`;
  };

  const selectors: Record<string, string> = {};
  for (const [ref, { id, name, topDocument }] of preferred) {
    if (topDocument && id && idCount.get(id) === 1) selectors[ref] = `#${id}`;
    else if (topDocument && name && nameCount.get(name) === 1) selectors[ref] = name;
    else selectors[ref] = `[${refAttribute}="${ref}"]`;
  }
  return { html: `<!doctype html>${emit(root)}`, selectors };
}
