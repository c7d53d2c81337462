import { readFileSync } from "node:fs";
import type { ResolvedRedirects } from "./redirects.ts";
import type { Strings } from "./strings.ts";

/** What the page script reads from the document's `page-data` block. */
export interface PageData {
  strings: Strings;
  redirect: ResolvedRedirects;
}

/** The static document with the two places a request fills in: `<html lang>` and the page-data block. */
export interface PageTemplate {
  render(lang: string, data: PageData): string;
}

const langAttribute = /(<html\b[^>]*?\blang=")[^"]*(")/;
const dataBlock = /(<script type="application\/json" id="page-data">)[\s\S]*?(<\/script>)/;

/**
 * page.html, read from beside this module: in the repository, and beside the bundle once deployed
 * (infra/constructs/bundling.ts copies it there). Read once per process.
 */
export function pageTemplate(html: string = readFileSync(new URL("./page.html", import.meta.url), "utf8")): PageTemplate {
  const lang = langAttribute.exec(html);
  if (!lang) throw new Error('page.html must open with <html lang="...">');
  const [beforeLang, afterLang] = splitAround(html, lang);
  const data = dataBlock.exec(afterLang);
  if (!data) throw new Error('page.html must hold <script type="application/json" id="page-data"></script>');
  const [beforeData, afterData] = splitAround(afterLang, data);
  return {
    render: (language, pageData) => `${beforeLang}${escapeAttribute(language)}${beforeData}${scriptSafeJson(pageData)}${afterData}`,
  };
}

/** The text before the match's replaced part (its first group kept) and after it (its last group kept). */
function splitAround(text: string, match: RegExpExecArray): [string, string] {
  const [whole, opening = "", closing = ""] = match;
  return [text.slice(0, match.index) + opening, closing + text.slice(match.index + whole.length)];
}

/**
 * JSON that cannot end its `<script>` element or open a comment in it: `<`, `>` and `&` become
 * JSON escapes, which JSON.parse reads back unchanged.
 */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function escapeAttribute(value: string): string {
  return value.replace(/[&"<>]/g, (character) => `&#${character.charCodeAt(0)};`);
}
