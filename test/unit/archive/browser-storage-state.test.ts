import { describe, expect, it } from "vitest";
import { mergeStorageStates, sessionArchive, storedStorageState } from "#shared/archive/session-archive.ts";
import { parseStorageState, type StorageState } from "#shared/archive/storage-state.ts";
import { writeProfileTar } from "#shared/archive/tar.ts";
import { validateUpload } from "#shared/archive/validate.ts";
import { aProfileManifest, aStorageState } from "../../support/archive-builders.ts";

/** A browser login's state: IndexedDB as Playwright writes it, and sessionStorage, on top of cookies and localStorage. */
function aBrowserState(): StorageState {
  const state = aStorageState();
  return {
    ...state,
    origins: [
      {
        origin: "https://app.example.com",
        localStorage: [{ name: "token", value: "t" }],
        indexedDB: [
          {
            name: "firebaseLocalStorageDb",
            version: 1,
            stores: [
              {
                name: "firebaseLocalStorage",
                autoIncrement: false,
                keyPath: "fbase_key",
                records: [{ value: { fbase_key: "firebase:authUser", value: { uid: "u1" } } }],
                indexes: [],
              },
            ],
          },
        ],
        sessionStorage: [{ name: "msal.token.keys", value: "{}" }],
      },
      { origin: "https://login.example.com", localStorage: [], sessionStorage: [{ name: "msal.interaction.status", value: "x" }] },
    ],
  };
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value));

describe("a browser login's storage state", () => {
  it("validates and keeps IndexedDB and sessionStorage", () => {
    // Prepare
    const state = aBrowserState();

    // Act
    const parsed = parseStorageState(encode(state));

    // Assess
    expect(parsed).toEqual(state);
  });

  it("names the path of a malformed sessionStorage entry", () => {
    // Prepare
    const state = aBrowserState();
    const document = { ...state, origins: [{ ...state.origins[0], sessionStorage: [{ name: "msal", value: 42 }] }] };

    // Act
    const act = () => parseStorageState(encode(document));

    // Assess
    expect(act).toThrow("storage_state.json: origins[0].sessionStorage[0].value: expected string");
  });

  it("names the path of a malformed IndexedDB database", () => {
    // Prepare
    const state = aBrowserState();
    const document = { ...state, origins: [{ ...state.origins[0], indexedDB: [{ name: "db", version: 1, stores: "none" }] }] };

    // Act
    const act = () => parseStorageState(encode(document));

    // Assess
    expect(act).toThrow("storage_state.json: origins[0].indexedDB[0].stores: expected array");
  });

  it("round-trips through every archive format the service reads and writes", async () => {
    // Prepare
    const state = aBrowserState();
    const tar = await writeProfileTar({ storageState: state, profile: aProfileManifest() });
    const saved = await sessionArchive(state, aProfileManifest());

    // Act
    const uploads = await Promise.all([
      validateUpload("application/json", encode(state)),
      validateUpload("application/x-tar", tar),
      validateUpload("application/zstd", saved),
    ]);
    const stored = await Promise.all(uploads.map((upload) => storedStorageState(upload.kind, upload.storedBytes)));

    // Assess
    expect(uploads.map((upload) => upload.storageState)).toEqual([state, state, state]);
    expect(stored).toEqual([state, state, state]);
  });

  it("replaces a saved origin with the login's, sessionStorage and IndexedDB included", () => {
    // Prepare
    const saved: StorageState = {
      cookies: [],
      origins: [{ origin: "https://app.example.com", localStorage: [], sessionStorage: [{ name: "stale", value: "old" }] }],
    };
    const login = aBrowserState();

    // Act
    const merged = mergeStorageStates(saved, login);

    // Assess
    expect(merged.origins).toEqual(login.origins);
  });
});
