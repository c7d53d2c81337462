import type { IncomingHttpHeaders } from "node:http";
import type { LoginStep } from "./forms.ts";
import { FlowFailure, pathOf } from "./kernel.ts";
import type { FlowPrompt } from "./types.ts";

/**
 * HTTP Basic authentication (RFC 7617): a page answered 401 with a `WWW-Authenticate: Basic`
 * challenge, which a browser answers with its own prompt for a user name and a password. The engine
 * shows it as a login step like a form's, and answers it by repeating the request with an
 * `Authorization: Basic` header.
 */

export interface AuthChallenge {
  /** The scheme, lower-cased: `basic`, `digest`, `bearer`, `negotiate`... */
  scheme: string;
  /** Its parameters, names lower-cased, quoted strings unquoted. */
  params: Record<string, string>;
}

/** A challenge's quoted-string or token value after `=` (RFC 9110 auth-param). */
const paramValue = /^\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))/;
const token = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)/;
const token68 = /^\s*([A-Za-z0-9._~+/-]+=*)\s*(?=,|$)/;

/**
 * The challenges of a `WWW-Authenticate` value, several schemes in one header included
 * (`Negotiate, Basic realm="x"`); Node joins repeated headers with ", ". No library the project
 * keeps parses this header, and the grammar is small.
 */
export function parseAuthChallenges(header: string): AuthChallenge[] {
  const challenges: AuthChallenge[] = [];
  let rest = header;
  let current: AuthChallenge | null = null;
  while (rest.trim() !== "") {
    rest = rest.replace(/^[\s,]+/, "");
    const name = token.exec(rest);
    if (!name) break;
    const afterName = rest.slice(name[0].length);
    const value = paramValue.exec(afterName);
    if (current && value) {
      current.params[name[1]!.toLowerCase()] = value[1] !== undefined ? value[1].replace(/\\(.)/g, "$1") : (value[2] ?? "");
      rest = afterName.slice(value[0].length);
      continue;
    }
    current = { scheme: name[1]!.toLowerCase(), params: {} };
    challenges.push(current);
    rest = afterName;
    // A token68 (`Negotiate abc==`) holds no parameters: skip it.
    const opaque = token68.exec(rest);
    if (opaque && !paramValue.test(rest.slice(opaque[0].length))) rest = rest.slice(opaque[0].length);
  }
  return challenges;
}

/** The Basic challenge of a 401 answer, or null. */
export function basicChallengeOf(page: { status: number; headers: IncomingHttpHeaders }): AuthChallenge | null {
  const header = page.headers["www-authenticate"];
  if (page.status !== 401 || !header) return null;
  const values = Array.isArray(header) ? header : [header];
  return values.flatMap(parseAuthChallenges).find((challenge) => challenge.scheme === "basic") ?? null;
}

export const basicUserField = "username";
export const basicPasswordField = "password";

/** The step a Basic challenge on `pageUrl` asks: a user name and a password, as the browser's own prompt does. */
export function basicAuthStep(pageUrl: string, challenge: AuthChallenge): LoginStep {
  const realm = challenge.params.realm ?? null;
  const where = realm ? ` (${realm})` : "";
  const prompt: FlowPrompt = {
    discovered_fields: [
      { name: basicUserField, label: `User name${where}`, selector: "", type: "text", required: true, linked_mfa_type: null },
      { name: basicPasswordField, label: `Password${where}`, selector: "", type: "password", required: true, linked_mfa_type: null },
    ],
    fields: [
      { id: basicUserField, ref: "identifier", type: "identifier", label: `User name${where}`, observed_selector: null, required: true },
      { id: basicPasswordField, ref: "password", type: "password", label: `Password${where}`, observed_selector: null, required: true },
    ],
    choices: [],
    mfa_options: [],
    sign_in_options: [],
    pending_sso_buttons: [],
    external_action_message: null,
  };
  const url = new URL(pageUrl);
  return {
    prompt,
    plan: {
      kind: "input",
      pageUrl,
      forms: [],
      fieldForm: null,
      fields: [
        { id: basicUserField, name: basicUserField, ref: "identifier", type: "identifier", linkedMfaType: null, required: true },
        { id: basicPasswordField, name: basicPasswordField, ref: "password", type: "password", linkedMfaType: null, required: true },
      ],
      choices: [],
      signature: `basic|${url.origin}${url.pathname}|${realm ?? ""}`,
      basicAuth: { realm },
    },
    asksLogin: true,
  };
}

/**
 * The `Authorization` value for the typed user name and password, or a problem with them: RFC 7617
 * has no way to send a user name with a colon. UTF-8, as browsers send it.
 */
export function basicAuthorization(username: string, password: string): { authorization: string } | { problem: string } {
  if (username.includes(":")) return { problem: "the user name cannot contain ':' in HTTP Basic authentication" };
  return { authorization: `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}` };
}

/**
 * A Basic login the service cannot keep: the site accepted the password but keeps no session
 * without it (`refusal`: what it answered to the cookies alone; null: it set no cookie at all). A
 * browser would send the password with every request; a profile holds cookies, never the password.
 */
export function unkeptBasicSession(pageUrl: string, refusal: string | null): FlowFailure {
  const why = refusal === null ? "but set no session cookie" : `but with its cookies alone ${refusal}`;
  return new FlowFailure(
    "unsupported_auth_method",
    `${pathOf(pageUrl)} accepted the HTTP Basic password ${why}: the site needs the password with every request, and the service keeps no password in a profile`,
  );
}

/**
 * The messages of a Basic challenge shown again: its 401 page says the same whatever was sent, so
 * only what it says beyond the challenge's own page (`shownBefore`) answers the password (`said`),
 * and the challenge's own words stay what the next attempt is compared with (`standing`).
 */
export function basicRejectionMessages<Message extends { text: string }>(messages: Message[], shownBefore: ReadonlySet<string>): { said: Message[]; standing: Message[] } {
  return { said: messages.filter((message) => !shownBefore.has(message.text)), standing: messages.filter((message) => shownBefore.has(message.text)) };
}
