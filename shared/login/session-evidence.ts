import { createHash, randomBytes } from "node:crypto";
import { isTag, isText, type AnyNode, type Element, type Text } from "domhandler";
import { DomUtils } from "htmlparser2";
import { isSignInLink } from "./forms.ts";
import { signOutAddress, type PageModel } from "./page.ts";
import { loginEngineKinds, sessionEvidenceBases, type SessionEvidence, type SessionEvidenceBasis, type SignedInMarker } from "./types.ts";

/** The page fetched without the session. */
export interface AnonymousPage {
  model: PageModel;
  /** What a visitor without a session gets: 401/403, a redirect to a login page, or a password form. */
  refused: boolean;
}

export type EvidenceVerdict = { state: "logged_in" } | { state: "logged_out"; reason: string } | { state: "inconclusive"; reason: string };

export const unverifiableReason =
  "the page cannot tell signed-in from signed-out: it looked the same with and without the session, or could not be fetched again after the login";

const accountAddress = /(?:^|[/_.?&=:-])(?:account|accounts|profile|profil|user|users|member|members|me|my|settings|preferences|konto|compte|perfil|viewprofile|password_change)(?:[/_.?&=:-]|$)/i;
/** Query parameters that change per visit or per session: left out when two links are compared. */
const volatileParameter = /^(?:sid|_?nonce|_wpnonce|token|csrf|_csrf|csrfmiddlewaretoken|authenticity_token|state|returnto|return_to|returnurl|redirect|redirect_to|next|came_from|ref|_|t|ts)$/i;
const randomValue = /^[\w-]{20,}$/;
/**
 * Ids and class names a build generates (CSS-in-JS, CSS modules, framework ids, hashes): they change
 * with a deploy, so a marker located by one would go stale.
 */
const generatedName = /^(?:css|jsx|svelte|astro|emotion|sc)-|^:|__[\w-]*\d[\w-]*$|^_(?=[\w-]*\d)[\w-]{4,}$|^(?=[a-z\d]*\d[a-z\d]*\d)(?=[a-z\d]*[a-z])[a-z\d]{6,}$|\d{3,}/i;
/** Elements that hold a page's parts whatever their classes: a place to fall back on when nothing nearer is named. */
const landmarks = new Set(["header", "nav", "footer", "aside", "main", "form"]);
/** Cookie names that carry a message, a return address or a preference for a request or two, not the session. */
const passingCookie = /flash|message|notice|alert|toast|redirect|return|referr?er|^next$|csrf|xsrf|consent|locale|^lang|theme|timezone|^_ga|^_gid/i;
const tokenSeparators = /[\s,;:!?()"'<>«»[\]{}|/\\]+/;
const shortestName = 3;
/** Elements whose text no visitor reads as the page's. */
const unreadText = new Set(["script", "style", "title", "noscript", "textarea", "template"]);
/** How far up from a name or link an element with an id or class is looked for, to say where it shows. */
const locatorDepth = 3;

/** What one page shows that a marker or a sign-in offer could be made of, each under a key that compares pages. */
interface PageFindings {
  signOut: boolean;
  /** `locator name` -> where and which name. */
  names: Map<string, { where: string; name: string }>;
  /** Account-like same-site links, normalised. */
  accountLinks: Set<string>;
  signInPlaces: Set<string>;
}

function findingsOf(page: PageModel, names: string[]): PageFindings {
  const origin = new URL(page.url).origin;
  const accountLinks = new Set<string>();
  const signInPlaces = new Set<string>();
  for (const link of page.links) {
    const href = normalisedLink(link.href);
    if (href === null || href.origin !== origin) continue;
    if (isSignInLink(link)) {
      const place = placeOf(link.element);
      if (place !== null) signInPlaces.add(place);
    } else if (!signOutAddress.test(href.href) && (accountAddress.test(href.pathname + href.search) || names.some((name) => link.text.toLowerCase().includes(name)))) {
      accountLinks.add(href.href);
    }
  }
  return { signOut: page.hasSignOut, names: nameLocations(page, names), accountLinks, signInPlaces };
}

/**
 * What both signed-in fetches show that the page without the session does not; `anonymous` null when
 * it could not be fetched. Anything that differs between the two signed-in fetches changes per request
 * (a count, a featured link) and is no evidence.
 */
export function learnSessionEvidence(options: {
  signedIn: [PageModel, PageModel];
  anonymous: AnonymousPage | null;
  /** What the person typed to name the account (never a password). */
  identifiers: string[];
  sessionCookies: string[];
}): SessionEvidence {
  const salt = randomBytes(16).toString("base64url");
  const hash = (value: string) => saltedHash(salt, value);
  const names = accountNames(options.identifiers);
  const [firstPage, secondPage] = options.signedIn;
  const [first, second] = options.signedIn.map((page) => findingsOf(page, names)) as [PageFindings, PageFindings];
  const refused = options.anonymous?.refused ?? false;
  const anonymousPage = refused ? null : (options.anonymous?.model ?? null);
  const anonymous = anonymousPage ? findingsOf(anonymousPage, names) : null;
  const candidates: SignedInMarker[] = [];

  if (first.signOut && second.signOut && !anonymous?.signOut) candidates.push({ kind: "sign_out" });
  // A name the page shows to anyone (a public list of authors) names no session, wherever it shows.
  const anonymousWords = new Set(anonymousPage ? wordsIn(anonymousPage.document.children) : []);
  for (const [key, where] of first.names) {
    if (second.names.has(key) && !anonymousWords.has(where.name)) candidates.push({ kind: "account_name", where: where.where, hash: hash(where.name) });
  }
  // Without the anonymous page a link could be the same for everyone: only the two above are sure signs.
  if (anonymous) {
    for (const href of first.accountLinks) {
      if (second.accountLinks.has(href) && !anonymous.accountLinks.has(href)) candidates.push({ kind: "account_link", hash: hash(href) });
    }
  }
  // Each marker is read back the way a check reads it, on the very pages it was learnt from.
  const signedIn = candidates.filter(
    (marker) => shows(marker, firstPage, salt) && shows(marker, secondPage, salt) && !(anonymousPage !== null && shows(marker, anonymousPage, salt)),
  );
  const signInPlaces = anonymous
    ? [...anonymous.signInPlaces].filter((place) => !first.signInPlaces.has(place) && !second.signInPlaces.has(place) && !containsName(place, names))
    : [];
  const evidence: SessionEvidence = {
    version: 2,
    basis: "verified",
    salt,
    signedIn,
    signInPlaces,
    sessionCookies: options.sessionCookies.filter((name) => !containsName(name, names)),
  };
  const told = signedIn.length > 0 || signInPlaces.length > 0 || refused;
  const judge = (page: PageModel) => judgeWithEvidence(evidence, () => page).state;
  const holds = judge(firstPage) === "logged_in" && judge(secondPage) === "logged_in" && (anonymousPage === null || judge(anonymousPage) !== "logged_in");
  return told && holds ? evidence : { ...evidence, basis: "unverifiable", signedIn: [], signInPlaces: [] };
}

/** For a login whose landing page could not be fetched again: nothing was learnt, and no cookie is known to be the session's. */
export function unlearntEvidence(): SessionEvidence {
  return { version: 2, basis: "unverifiable", salt: randomBytes(16).toString("base64url"), signedIn: [], signInPlaces: [], sessionCookies: [] };
}

/**
 * Whether a page fetched with the saved session still shows what the signed-in page showed. The
 * caller has already ruled out the plain signs (401/403, a login page, a deleted session cookie);
 * `read` parses the page, called only when the evidence needs it.
 */
export function judgeWithEvidence(evidence: SessionEvidence, read: () => PageModel): EvidenceVerdict {
  if (evidence.basis === "unverifiable") return { state: "inconclusive", reason: unverifiableReason };
  if (evidence.signedIn.length === 0 && evidence.signInPlaces.length === 0) return { state: "logged_in" };
  const page = read();
  if (evidence.signedIn.some((marker) => shows(marker, page, evidence.salt))) return { state: "logged_in" };
  if (evidence.signedIn.length > 0) {
    return { state: "logged_out", reason: "the page no longer shows what it showed signed in (a sign-out control, the account's name or link)" };
  }
  // A sign-in link elsewhere (a wiki page named Login in a list of changes) says nothing about the session.
  const offered = page.links.some((link) => isSignInLink(link) && evidence.signInPlaces.includes(placeOf(link.element) ?? ""));
  return offered ? { state: "logged_out", reason: "the page offers to sign in where it does without the session" } : { state: "logged_in" };
}

/** Cheapest first: most signed-in pages show a sign-out control, which needs no hashing. */
function shows(marker: SignedInMarker, page: PageModel, salt: string): boolean {
  switch (marker.kind) {
    case "sign_out":
      return page.hasSignOut;
    case "account_link":
      return page.links.some((link) => {
        const href = normalisedLink(link.href);
        return href !== null && saltedHash(salt, href.href) === marker.hash;
      });
    case "account_name":
      return DomUtils.findAll((element) => locatorOf(element) === marker.where, page.document.children).some((element) =>
        wordsIn(element.children).some((token) => saltedHash(salt, token) === marker.hash),
      );
  }
}

/**
 * The cookies whose deletion ends the session: added by the login (the visit without the session
 * lacks them), kept through both signed-in fetches (a one-shot cookie is gone by the second), and not
 * named like a message, return address or preference.
 */
export function sessionCookieNames(names: { afterFirst: string[]; afterSecond: string[]; anonymous: string[] }): string[] {
  const anonymous = new Set(names.anonymous);
  return names.afterFirst.filter((name) => names.afterSecond.includes(name) && !anonymous.has(name) && !passingCookie.test(name));
}

export function isSessionEvidence(value: unknown): value is SessionEvidence {
  if (typeof value !== "object" || value === null) return false;
  const evidence = value as Partial<SessionEvidence>;
  return (
    evidence.version === 2 &&
    sessionEvidenceBases.includes(evidence.basis as SessionEvidenceBasis) &&
    typeof evidence.salt === "string" &&
    Array.isArray(evidence.signedIn) &&
    Array.isArray(evidence.signInPlaces) &&
    Array.isArray(evidence.sessionCookies) &&
    (evidence.engine === undefined || loginEngineKinds.includes(evidence.engine))
  );
}

/** The forms of what was typed a page may show: the whole identifier, and an email's local part. */
function accountNames(identifiers: string[]): string[] {
  const names = new Set<string>();
  for (const identifier of identifiers) {
    const whole = identifier.trim().toLowerCase();
    if (whole.length >= shortestName) names.add(whole);
    const local = whole.includes("@") ? whole.slice(0, whole.indexOf("@")) : "";
    if (local.length >= shortestName) names.add(local);
  }
  return [...names];
}

/** Where each name shows as a word of the page's text, keyed by place and name. */
function nameLocations(page: PageModel, names: string[]): Map<string, { where: string; name: string }> {
  const found = new Map<string, { where: string; name: string }>();
  if (names.length === 0) return found;
  for (const text of readTexts(page.document.children)) {
    const tokens = tokensOf(text.data);
    const name = names.find((candidate) => tokens.includes(candidate));
    const parent = text.parent;
    if (!name || !parent || !isTag(parent)) continue;
    const where = placeOf(parent, names);
    if (where !== null) found.set(`${where} ${name}`, { where, name });
  }
  return found;
}

/**
 * The words of the text under `nodes`, each text node split on its own: adjacent elements
 * ("<span>Signed in as</span><strong>ada</strong>", "<td>ada</td><td>3 min ago</td>") hold separate
 * words even where no space divides them. Learning, excluding and checking all read words this way.
 */
function wordsIn(nodes: readonly AnyNode[]): string[] {
  return readTexts(nodes).flatMap((text) => tokensOf(text.data));
}

function readTexts(nodes: readonly AnyNode[], found: Text[] = []): Text[] {
  for (const node of nodes) {
    if (isText(node)) found.push(node);
    else if (isTag(node) && !unreadText.has(node.name)) readTexts(node.children, found);
  }
  return found;
}

/** Whether a locator or cookie name spells out the account's name (`div#user-ada`): kept, it would name the account in plain text. */
function containsName(value: string, names: readonly string[]): boolean {
  const lower = value.toLowerCase();
  return names.some((name) => lower.includes(name));
}

/**
 * The locator of the nearest element, from `element` up, that a later version of the page will still
 * name the same way: one with an id or a class a build did not generate (up to `locatorDepth` levels
 * up), else the nearest landmark (header, nav, main...). Null when nothing names the place. A locator
 * that contains one of `names` is passed over for one further up.
 */
function placeOf(element: Element, names: readonly string[] = []): string | null {
  let depth = 0;
  for (let node: Element | null = element; node; node = node.parent && isTag(node.parent) ? node.parent : null, depth++) {
    const locator = locatorOf(node);
    if (locator !== null && !containsName(locator, names) && (depth <= locatorDepth || landmarks.has(node.name))) return locator;
  }
  return null;
}

/** `tag#id`, `tag.class` (the first class a build did not generate), or a landmark's tag; null for an element nothing names. */
function locatorOf(element: Element): string | null {
  const id = element.attribs.id;
  if (id && !generatedName.test(id)) return `${element.name}#${id}`;
  const stableClass = (element.attribs.class ?? "").split(/\s+/).find((name) => name !== "" && !generatedName.test(name));
  if (stableClass) return `${element.name}.${stableClass}`;
  return landmarks.has(element.name) ? element.name : null;
}

function tokensOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(tokenSeparators)
    .map((token) => token.replace(/^[.@]+|[.]+$/g, ""))
    .flatMap((token) => (token.includes("@") ? [token, token.slice(0, token.indexOf("@"))] : [token]))
    .filter((token) => token.length >= shortestName);
}

/** The link without the query parameters that change per visit, so one account page compares equal. */
function normalisedLink(href: string): URL | null {
  try {
    const url = new URL(href);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    for (const [name, value] of [...url.searchParams]) {
      if (volatileParameter.test(name) || randomValue.test(value)) url.searchParams.delete(name);
    }
    url.searchParams.sort();
    return url;
  } catch {
    return null;
  }
}

function saltedHash(salt: string, value: string): string {
  return createHash("sha256").update(salt).update("\0").update(value).digest("base64url").slice(0, 22);
}
