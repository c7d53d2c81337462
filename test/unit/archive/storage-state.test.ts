import { describe, expect, it } from "vitest";
import { InvalidArchiveError } from "#shared/archive/errors.ts";
import { parseStorageState } from "#shared/archive/storage-state.ts";
import { aStorageState } from "../../support/archive-builders.ts";

const encode = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("parseStorageState", () => {
  it("parses a Playwright storageState and keeps keys it does not know", () => {
    // Prepare
    const state = aStorageState();
    const document = { ...state, cookies: [{ ...state.cookies[0], partitionKey: "https://example.com" }] };

    // Act
    const parsed = parseStorageState(encode(document));

    // Assess
    expect(parsed).toEqual(document);
  });

  it("names the path and the expected type of a wrong field", () => {
    // Prepare
    const document = { ...aStorageState(), cookies: [{ ...aStorageState().cookies[0], name: 42 }] };

    // Act
    const act = () => parseStorageState(encode(document));

    // Assess
    expect(act).toThrow(InvalidArchiveError);
    expect(act).toThrow("storage_state.json: cookies[0].name: expected string");
  });

  it("names a missing field", () => {
    // Prepare
    const document = { cookies: [] };

    // Act
    const act = () => parseStorageState(encode(document));

    // Assess
    expect(act).toThrow("storage_state.json: origins: missing, expected array");
  });

  it("lists the allowed sameSite values and counts the other problems", () => {
    // Prepare
    const cookie = { ...aStorageState().cookies[0], sameSite: "lax", secure: "yes" };
    const document = { cookies: [cookie], origins: [{ origin: "https://example.com", localStorage: [{ name: "a" }] }] };

    // Act
    const act = () => parseStorageState(encode(document));

    // Assess
    expect(act).toThrow(
      'storage_state.json: cookies[0].secure: expected boolean (and 2 more problems)',
    );
  });

  it("rejects a document that is not an object", () => {
    // Prepare
    const document = [1, 2];

    // Act
    const act = () => parseStorageState(encode(document), "body");

    // Assess
    expect(act).toThrow("body: expected object");
  });

  it("rejects malformed JSON", () => {
    // Prepare
    const bytes = Buffer.from('{"cookies": [');

    // Act
    const act = () => parseStorageState(bytes);

    // Assess
    expect(act).toThrow(/^storage_state\.json: not valid JSON: /);
  });

  it("rejects bytes that are not UTF-8", () => {
    // Prepare
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);

    // Act
    const act = () => parseStorageState(bytes);

    // Assess
    expect(act).toThrow("storage_state.json: not valid JSON: not valid UTF-8");
  });
});
