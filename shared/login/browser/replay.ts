import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unzipSync, zipSync, type Zippable } from "fflate";
import type { BrowserContext } from "playwright-core";
import type { StorageState } from "../../archive/storage-state.ts";
import { captureBrowserState } from "./browser-state.ts";

/**
 * A flow's Playwright trace (`record_session`), which opens in Playwright's trace viewer. The trace
 * records what the engine typed (`fill` and `type` arguments, `evaluate` arguments, input values in
 * every DOM snapshot), what each of the engine's calls answered (its own reads of the page's storage
 * and cookies among them), and the requests the page sent and their answers (a login API's answer
 * carries the token the page then keeps), so what leaves this module has every typed secret and
 * every value the browser kept masked, no call's answer, no request bodies, and no credential
 * carried in a header or a cookie.
 */

export const replayMask = "********";

/**
 * Starts recording every action with its DOM snapshots. No screencast: its frames are pictures of
 * the page, in which a typed identifier or code shows as pixels that no masking of bytes can find.
 */
export async function startReplay(context: BrowserContext): Promise<void> {
  await context.tracing.start({ screenshots: false, snapshots: true });
}

/**
 * Stops recording and answers the trace zip with `secrets` masked, and with them every value the
 * browser keeps at the end (cookies, localStorage, sessionStorage, IndexedDB).
 */
export async function stopReplay(context: BrowserContext, secrets: Iterable<string>): Promise<Buffer> {
  // Playwright writes a stopped trace only to a file.
  const directory = await mkdtemp(join(tmpdir(), "acs-replay-"));
  try {
    const path = join(directory, "trace.zip");
    await context.tracing.stop({ path });
    // Read once the trace has stopped, so that this read is not in it.
    const kept = storedSecrets(browserStateValues(await captureBrowserState(context)));
    return maskedTrace(await readFile(path), [...secrets, ...kept]);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/**
 * A kept value shorter than this is a flag or a setting ("true", "en", "dark"), not a session: masked
 * everywhere it would blot out the trace's own text.
 */
const minStoredSecretLength = 8;

/**
 * The values a browser keeps (`values`: cookies, storage entries) that a trace must not show: each
 * one whole and, for one holding JSON (an MSAL account, a `{ accessToken }` object), each string in
 * it, as the site's answer that brought the session wrote them separately.
 */
export function storedSecrets(values: Iterable<string>): string[] {
  const found: string[] = [];
  for (const value of values) {
    found.push(value);
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      continue;
    }
    found.push(...stringsIn(parsed));
  }
  return found.filter((value) => value.length >= minStoredSecretLength);
}

/** Every value a storageState holds: cookies', localStorage's and sessionStorage's values, and the strings of its IndexedDB records. */
export function browserStateValues(state: StorageState): string[] {
  return [
    ...state.cookies.map((cookie) => cookie.value),
    ...state.origins.flatMap((origin) => [
      ...origin.localStorage.map((entry) => entry.value),
      ...(origin.sessionStorage ?? []).map((entry) => entry.value),
      ...(origin.indexedDB ?? []).flatMap((database) => database.stores.flatMap((store) => store.records.flatMap(stringsIn))),
    ]),
  ];
}

function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(stringsIn);
  return [];
}

/**
 * Every way a typed value may be written down in a trace entry: as typed, escaped inside a JSON or
 * an HTML text, percent-encoded in a URL, form-encoded in a body.
 */
function writtenForms(secret: string): string[] {
  const html = secret.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
  const form = new URLSearchParams({ v: secret }).toString().slice(2);
  return [secret, JSON.stringify(secret).slice(1, -1), html, encodeURIComponent(secret), form];
}

/** The trace's event logs: one JSON object a line (`trace.trace`, `trace.network`, and their numbered chunks). */
const eventLog = /\.(trace|network)$/;

/**
 * A header that carries a credential: `Authorization: Basic` is the password in base64, a bearer
 * token is the session itself, and cookies are sessions too. Besides the standard ones, sites and
 * APIs name their own (`X-Auth-Token`, `X-API-Key`, `X-CSRF-Token`, `X-Session-Id`).
 */
const credentialHeader = /auth|cookie|token|secret|session|api-?key/i;

/**
 * The trace zip with every written form of each secret replaced by `replayMask` in every entry, the
 * values of credential headers and of cookies replaced by it wherever the trace lists them (the
 * network log's requests and responses), what each call answered dropped (the engine's reads of the
 * page's storage and cookies are calls too), the bodies of the requests the page sent (a login POST
 * carries the password, in whatever encoding the site chose) dropped with the resource files that
 * held them.
 */
export function maskedTrace(zip: Uint8Array, secrets: Iterable<string>): Buffer {
  const values = [...new Set([...secrets].filter((secret) => secret.length > 0))];
  // Longest first: a secret that holds another is masked whole, not around the shorter one's mask.
  const forms = [...new Set(values.flatMap(writtenForms))].sort((a, b) => b.length - a.length);
  const maskText = (text: string) => forms.reduce((masked, form) => masked.split(form).join(replayMask), text);
  const maskValue = (value: unknown, key?: string): unknown => {
    if (typeof value === "string") return maskText(value);
    if (Array.isArray(value)) return value.map((inner) => (key === "headers" || key === "cookies" ? maskCredential(inner, key) : maskValue(inner)));
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, maskValue(inner, name)]));
    return value;
  };
  const maskCredential = (entry: unknown, list: "headers" | "cookies"): unknown => {
    const pair = entry as { name?: unknown; value?: unknown };
    const isCredential = typeof pair?.value === "string" && typeof pair.name === "string" && (list === "cookies" || credentialHeader.test(pair.name));
    return isCredential ? maskValue({ ...pair, value: replayMask }) : maskValue(entry);
  };

  const entries = unzipSync(zip);
  const requestBodies = new Set<string>();
  const out: Zippable = {};
  for (const [name, data] of Object.entries(entries)) {
    if (!eventLog.test(name)) continue;
    const lines = new TextDecoder().decode(data).split("\n");
    const masked = lines.map((line) => {
      if (line.trim() === "") return line;
      const event = JSON.parse(line) as unknown;
      dropCallResult(event);
      const body = dropRequestBody(event);
      if (body) requestBodies.add(body);
      return JSON.stringify(maskValue(event));
    });
    out[name] = new TextEncoder().encode(masked.join("\n"));
  }
  const logs = Object.values(out).map((data) => new TextDecoder().decode(data as Uint8Array));
  for (const [name, data] of Object.entries(entries)) {
    if (eventLog.test(name)) continue;
    // The same bytes may also be a response's body (resources are named by their content's hash).
    if (requestBodies.has(name) && !logs.some((log) => log.includes(name))) continue;
    out[name] = maskedBytes(data, values, maskText);
  }
  return Buffer.from(zipSync(out));
}

/**
 * Removes what a call answered from its `after` event: the trace viewer shows it only as the call's
 * return value, and the engine's calls answer what it read from the page (storage, cookies, inputs).
 */
function dropCallResult(event: unknown): void {
  const after = event as { type?: string; result?: unknown };
  if (after.type === "after") delete after.result;
}

/** Removes the body of a `resource-snapshot` event's request; answers the resource file that held it. */
function dropRequestBody(event: unknown): string | undefined {
  const request = (event as { type?: string; snapshot?: { request?: { postData?: { _file?: string; _sha1?: string }; bodySize?: number } } }).snapshot?.request;
  if ((event as { type?: string }).type !== "resource-snapshot" || !request?.postData) return undefined;
  const file = request.postData._file ?? (request.postData._sha1 ? `resources/${request.postData._sha1}` : undefined);
  delete request.postData;
  return file;
}

/**
 * A text entry (a page, a script, a response body) masked as text; a binary one (an image, a font)
 * keeps its length, each secret's bytes overwritten where they occur, so its format stays whole.
 */
function maskedBytes(data: Uint8Array, secrets: string[], maskText: (text: string) => string): Uint8Array {
  let text: string | undefined;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(data);
  } catch {
    text = undefined;
  }
  if (text !== undefined) return new TextEncoder().encode(maskText(text));
  const bytes = Buffer.from(data);
  for (const secret of secrets) {
    const needle = Buffer.from(secret);
    for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + needle.length)) bytes.fill("*", at, at + needle.length);
  }
  return bytes;
}
