import { createHash, randomBytes } from "node:crypto";
import { isTag, isText, type Document, type Element } from "domhandler";
import { DomUtils, parseDocument } from "htmlparser2";

/**
 * What tells a site's signed-in landing page from the same page without the session, learnt at each
 * login by fetching `post_login_url` once more without cookies, and looked for again by every health
 * check. Values that could name the account are kept as hashes salted per login, and the whole is
 * sealed on the connection's record.
 */
export interface SessionEvidence {
  version: 1;
  basis: SessionEvidenceBasis;
  salt: string;
  /** Shown with the session only: a check counts as logged in while at least one still shows. */
  signedIn: SignedInMarker[];
  /** The page without the session offered to sign in and the signed-in one did not: its return means logged out. */
  signInWhenOut: boolean;
  /** Without the session the page sent to a login page, asked for a password, or answered 401/403. */
  refusedWhenOut: boolean;
  /** Cookies the login added for `post_login_url`: a page that deletes one has ended the session. */
  sessionCookies: string[];
}

/**
 * `verified`: checks look for the evidence. `unverifiable`: the page looked the same with and without
 * the session, so a check can notice a redirect to a login page, a password form or 401/403, and
 * nothing more.
 */
export const sessionEvidenceBases = ["verified", "unverifiable"] as const;
export type SessionEvidenceBasis = (typeof sessionEvidenceBases)[number];

export type SignedInMarker =
  | { kind: "sign_out" }
  /** The account's name or identifier, hashed, shown inside the element `where` names (`tag`, `tag#id` or `tag.class`). */
  | { kind: "account_name"; where: string; hash: string }
  /** A link to the account's own page, hashed. */
  | { kind: "account_link"; hash: string }
  | { kind: "title"; hash: string };

/** A fetched page as the evidence reads it. */
export interface FetchedPage {
  /** Where the fetch ended, after redirects. */
  url: string;
  body: string;
  /** What a visitor without a session gets: 401/403, a redirect to a login page, or a password form. */
  refused: boolean;
}

const signOutText =
  /\b(?:sign[ -]?out|log[ -]?(?:out|off)|sign[ -]?off|abmelden|ausloggen|uitloggen|afmelden|wyloguj|logga ut|log ud|logg ut|kirjaudu ulos|disconnetti)\b|d[ée]connexion|se d[ée]connecter|cerrar sesi[óo]n|(?:terminar|encerrar) sess[ãa]o|odhl[áa]sit|выйти|выход|ログアウト|登出|退出登录|注销/i;
const signOutAddress = /log[-_]?out|sign[-_]?out|log[-_]?off|sign[-_]?off|abmelden/i;
const signInText =
  /^(?:sign ?in|log ?in|login|sign ?on|log ?on|anmelden|einloggen|connexion|se connecter|iniciar sesi[óo]n|entrar|accedi|inloggen|aanmelden|zaloguj(?: się)?|logga in|kirjaudu(?: sisään)?|přihlásit(?: se)?|войти|ログイン|登录|登入)(?: (?:to|with) .{1,40})?$/i;
const signInAddress = /(?:^|[/_.?&=:-])(?:log-?in|sign-?in|sign_in|userlogin|wp-login\.php)(?:[/_.?&=-]|$)/i;
const accountAddress = /(?:^|[/_.?&=:-])(?:account|accounts|profile|profil|user|users|member|members|me|my|settings|preferences|konto|compte|perfil|viewprofile|password_change)(?:[/_.?&=:-]|$)/i;
/** Query parameters that change per visit or per session: left out when two links are compared. */
const volatileParameter = /^(?:sid|_?nonce|_wpnonce|token|csrf|_csrf|csrfmiddlewaretoken|authenticity_token|state|returnto|return_to|returnurl|redirect|redirect_to|next|came_from|ref|_|t|ts)$/i;
const randomValue = /^[\w-]{20,}$/;
const tokenSeparators = /[\s,;:!?()"'<>«»[\]{}|/\\]+/;
const shortestName = 3;
/** How far up from the text an element with an id or class is looked for, to say where the name shows. */
const locatorDepth = 3;

interface PageSignals {
  document: Document;
  signOut: boolean;
  signIn: boolean;
  title: string;
  /** Same-site links, normalised, with their text. */
  links: { href: string; text: string }[];
}

function readSignals(body: string, url: string): PageSignals {
  const document = parseDocument(body);
  const origin = originOf(url);
  let signOut = false;
  let signIn = false;
  let title = "";
  const links: PageSignals["links"] = [];
  for (const element of DomUtils.findAll((node) => ["a", "form", "button", "input", "title"].includes(node.name), document.children)) {
    const attribs = element.attribs;
    if (element.name === "title") {
      title ||= collapse(DomUtils.textContent(element));
      continue;
    }
    if (element.name === "form") {
      if (signOutAddress.test(attribs.action ?? "") || signOutAddress.test(`${attribs.id ?? ""} ${attribs.class ?? ""}`)) signOut = true;
      continue;
    }
    if (element.name === "input" && !["submit", "button"].includes((attribs.type ?? "").toLowerCase())) continue;
    const text = collapse(element.name === "input" ? (attribs.value ?? "") : DomUtils.textContent(element)) || attribs["aria-label"] || attribs.title || "";
    if (signOutText.test(text)) signOut = true;
    if (element.name !== "a") continue;
    const href = normalisedLink(attribs.href, url);
    if (href === null || originOf(href) !== origin) continue;
    if (signOutAddress.test(href)) signOut = true;
    else if (signInText.test(text) || signInAddress.test(new URL(href).pathname + new URL(href).search)) signIn = true;
    links.push({ href, text });
  }
  return { document, signOut, signIn, title, links };
}

/** What the signed-in page shows that the same page without the session does not; `anonymous` null when it could not be fetched. */
export function learnSessionEvidence(options: {
  signedIn: FetchedPage;
  anonymous: FetchedPage | null;
  /** What the person typed to name the account (never a password). */
  identifiers: string[];
  sessionCookies: string[];
}): SessionEvidence {
  const salt = randomBytes(16).toString("base64url");
  const hash = (value: string) => saltedHash(salt, value);
  const signedIn = readSignals(options.signedIn.body, options.signedIn.url);
  const refusedWhenOut = options.anonymous?.refused ?? false;
  const anonymous = refusedWhenOut ? null : options.anonymous;
  const anonymousSignals = anonymous ? readSignals(anonymous.body, anonymous.url) : null;
  const names = accountNames(options.identifiers);
  const markers: SignedInMarker[] = [];

  if (signedIn.signOut && !anonymousSignals?.signOut) markers.push({ kind: "sign_out" });
  const anonymousWords = new Set(anonymousSignals ? tokensOf(DomUtils.textContent(anonymousSignals.document)) : []);
  const shownNames = names.filter((name) => !anonymousWords.has(name));
  for (const where of nameLocations(signedIn.document, shownNames)) markers.push({ kind: "account_name", where: where.locator, hash: hash(where.name) });
  // Without the anonymous page a link or title could be the same for everyone: only the two above are sure signs.
  if (anonymousSignals) {
    const anonymousLinks = new Set(anonymousSignals.links.map((link) => link.href));
    const accountLinks = signedIn.links.filter(
      (link) =>
        !anonymousLinks.has(link.href) &&
        !signOutAddress.test(link.href) &&
        (accountAddress.test(new URL(link.href).pathname + new URL(link.href).search) || names.some((name) => link.text.toLowerCase().includes(name))),
    );
    for (const href of new Set(accountLinks.map((link) => link.href))) markers.push({ kind: "account_link", hash: hash(href) });
    if (signedIn.title && signedIn.title !== anonymousSignals.title) markers.push({ kind: "title", hash: hash(signedIn.title) });
  }
  const signInWhenOut = Boolean(anonymousSignals?.signIn) && !signedIn.signIn;
  const verified = markers.length > 0 || signInWhenOut || refusedWhenOut;
  return {
    version: 1,
    basis: verified ? "verified" : "unverifiable",
    salt,
    signedIn: markers,
    signInWhenOut,
    refusedWhenOut,
    sessionCookies: options.sessionCookies,
  };
}

export type EvidenceVerdict = { state: "logged_in" } | { state: "logged_out"; reason: string } | { state: "inconclusive"; reason: string };

/**
 * Whether a page fetched with the saved session still shows what the signed-in page showed. The
 * caller has already ruled out the plain signs (401/403, a login page, a deleted session cookie).
 */
export function judgeWithEvidence(evidence: SessionEvidence, page: { url: string; body: string }): EvidenceVerdict {
  if (evidence.basis === "unverifiable") {
    return { state: "inconclusive", reason: "the page looks the same with and without the session, so it cannot show whether the session still works" };
  }
  if (!evidence.signInWhenOut && evidence.signedIn.length === 0) return { state: "logged_in" };
  const signals = readSignals(page.body, page.url);
  if (evidence.signInWhenOut && signals.signIn) return { state: "logged_out", reason: "the page offers to sign in, as it does without the session" };
  if (evidence.signedIn.length === 0 || evidence.signedIn.some((marker) => shows(marker, signals, evidence.salt))) return { state: "logged_in" };
  return { state: "logged_out", reason: "the page no longer shows what it showed signed in (a sign-out control, the account's name or link)" };
}

/** Cheapest first: most signed-in pages show a sign-out control, which needs no hashing. */
function shows(marker: SignedInMarker, signals: PageSignals, salt: string): boolean {
  switch (marker.kind) {
    case "sign_out":
      return signals.signOut;
    case "title":
      return saltedHash(salt, signals.title) === marker.hash;
    case "account_link":
      return signals.links.some((link) => saltedHash(salt, link.href) === marker.hash);
    case "account_name":
      return DomUtils.findAll((element) => locatorOf(element) === marker.where, signals.document.children).some((element) =>
        tokensOf(DomUtils.textContent(element)).some((token) => saltedHash(salt, token) === marker.hash),
      );
  }
}

export function isSessionEvidence(value: unknown): value is SessionEvidence {
  if (typeof value !== "object" || value === null) return false;
  const evidence = value as Partial<SessionEvidence>;
  return (
    evidence.version === 1 &&
    sessionEvidenceBases.includes(evidence.basis as SessionEvidenceBasis) &&
    typeof evidence.salt === "string" &&
    Array.isArray(evidence.signedIn) &&
    Array.isArray(evidence.sessionCookies)
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

/** Where each name shows as a word of an element's own text; the nearest element with an id or class says where. */
function nameLocations(document: Document, names: string[]): { locator: string; name: string }[] {
  if (names.length === 0) return [];
  const found = new Map<string, { locator: string; name: string }>();
  for (const text of DomUtils.findAll(() => true, document.children).flatMap((element) => element.children.filter(isText))) {
    const tokens = tokensOf(text.data);
    const name = names.find((candidate) => tokens.includes(candidate));
    const parent = text.parent;
    if (!name || !parent || !isTag(parent) || ["script", "style", "title", "noscript", "textarea"].includes(parent.name)) continue;
    let holder: Element = parent;
    for (let depth = 0; depth < locatorDepth && !holder.attribs.id && !holder.attribs.class; depth++) {
      if (!holder.parent || !isTag(holder.parent)) break;
      holder = holder.parent;
    }
    if (!holder.attribs.id && !holder.attribs.class) holder = parent;
    const locator = locatorOf(holder);
    found.set(`${locator} ${name}`, { locator, name });
  }
  return [...found.values()];
}

function locatorOf(element: Element): string {
  if (element.attribs.id) return `${element.name}#${element.attribs.id}`;
  const firstClass = (element.attribs.class ?? "").trim().split(/\s+/)[0];
  return firstClass ? `${element.name}.${firstClass}` : element.name;
}

function tokensOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(tokenSeparators)
    .map((token) => token.replace(/^[.@]+|[.]+$/g, ""))
    .flatMap((token) => (token.includes("@") ? [token, token.slice(0, token.indexOf("@"))] : [token]))
    .filter((token) => token.length >= shortestName);
}

/** The link without its fragment and the query parameters that change per visit, so one account page compares equal. */
function normalisedLink(href: string | undefined, base: string): string | null {
  if (!href || /^\s*(javascript|mailto|tel):/i.test(href)) return null;
  try {
    const url = new URL(href.trim(), base);
    url.hash = "";
    for (const [name, value] of [...url.searchParams]) {
      if (volatileParameter.test(name) || randomValue.test(value)) url.searchParams.delete(name);
    }
    url.searchParams.sort();
    return url.href;
  } catch {
    return null;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "";
  }
}

function saltedHash(salt: string, value: string): string {
  return createHash("sha256").update(salt).update("\0").update(value).digest("base64url").slice(0, 22);
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
