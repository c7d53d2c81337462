import { describe, expect, it } from "vitest";
import { chooseLanguage, hostedLoginStrings } from "#shared/hosted-login/strings.ts";
import type { RedirectRefusal } from "#shared/hosted-login/redirects.ts";
import { canonicalFieldTypes, flowErrorCodes, mfaTypes } from "#shared/login/types.ts";

describe("chooseLanguage", () => {
  it.each([
    ["de", "de"],
    ["fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5", "fr"],
    ["en;q=0.5, de;q=0.9", "de"],
    ["ja, es;q=0.3, en;q=0.2", "es"],
    ["es;q=0.8, fr;q=0.8", "es"],
    ["en-US,en;q=0.9,de;q=0.8", "en"],
    ["de;q=0, fr", "fr"],
    ["de;q=0", "en"],
    ["fr;q=0.001", "fr"],
  ])("picks the highest-weighted language the page has: %j -> %s", (header, language) => {
    expect(chooseLanguage(header)).toBe(language);
  });

  it.each([
    ["de-AT", "de"],
    ["DE-at", "de"],
    ["es-419, en;q=0.5", "es"],
    ["fr-CA;q=0.9, pt-BR", "fr"],
  ])("falls back from a region to its language: %j -> %s", (header, language) => {
    expect(chooseLanguage(header)).toBe(language);
  });

  it.each([undefined, "", "pt-BR, ja;q=0.9", "*", "ja, *;q=0.5", "x-klingon"])("answers English when no language the page has is asked for: %j", (header) => {
    expect(chooseLanguage(header)).toBe("en");
  });

  it.each([
    [";;;,,,", "en"],
    ["q=0.5", "en"],
    ["de;", "de"],
    [" , de ;  q=0.7 , ", "de"],
    // A weight that is no qvalue leaves its entry out: it neither wins nor breaks the rest.
    ["fr;q=abc, de;q=0.5", "de"],
    ["fr;q=5, de;q=0.5", "de"],
    ["fr;q=-1, de;q=0.5", "de"],
    ["fr;q=1.2.3, de;q=0.5", "de"],
    ["fr;q=, de;q=0.5", "de"],
    ["fr;q=0.5000, de;q=0.4", "de"],
    ["\u{1F642};q=0.9, es", "es"],
    [`${"de-".repeat(5000)}x`, "de"],
  ])("reads a malformed header without failing: %j -> %s", (header, language) => {
    expect(chooseLanguage(header)).toBe(language);
  });

  it("never answers a language the page lacks, whatever the header", () => {
    for (const header of ["__proto__", "constructor, toString", "hasOwnProperty;q=1"]) expect(Object.hasOwn(hostedLoginStrings, chooseLanguage(header))).toBe(true);
  });
});

/** Every key path of a table (`fieldLabels.password`), with its text. */
function entries(table: object, prefix = ""): Array<[string, string]> {
  return Object.entries(table).flatMap(([key, value]): Array<[string, string]> =>
    typeof value === "string" ? [[`${prefix}${key}`, value]] : entries(value as object, `${prefix}${key}.`),
  );
}

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();

describe("the string tables", () => {
  const english = Object.fromEntries(entries(hostedLoginStrings.en!));

  it("has English and the other languages the page offers", () => {
    expect(Object.keys(hostedLoginStrings).sort()).toEqual(["de", "en", "es", "fr"]);
  });

  it.each(Object.keys(hostedLoginStrings))("%s has exactly English's keys, each a non-empty text with English's placeholders", (language) => {
    const table = Object.fromEntries(entries(hostedLoginStrings[language]!));
    expect(Object.keys(table).sort()).toEqual(Object.keys(english).sort());
    for (const [key, text] of Object.entries(table)) {
      expect(text.trim(), `${language} ${key}`).not.toBe("");
      expect(placeholders(text), `${language} ${key}`).toEqual(placeholders(english[key]!));
    }
  });

  it("gives a reason for every error code a failed flow can end with", () => {
    expect(Object.keys(hostedLoginStrings.en!.errorReasons).sort()).toEqual([...flowErrorCodes].sort());
  });

  it("names every field type, MFA method and redirect refusal the page can be given", () => {
    const refusals = Object.keys({ invalid: true, scheme: true, origin: true } satisfies Record<RedirectRefusal, true>);
    const en = hostedLoginStrings.en!;
    expect(Object.keys(en.fieldLabels).sort()).toEqual([...canonicalFieldTypes].sort());
    expect(Object.keys(en.mfaTypes).sort()).toEqual([...mfaTypes].sort());
    expect(Object.keys(en.redirectRefusedReasons).sort()).toEqual(refusals.sort());
  });
});
