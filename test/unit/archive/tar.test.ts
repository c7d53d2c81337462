import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { InvalidArchiveError } from "#shared/archive/errors.ts";
import { profileEntry, readTarEntry, storageStateEntry, writeProfileTar } from "#shared/archive/tar.ts";
import { aProfileManifest, aStorageState, packTar } from "../../support/archive-builders.ts";

describe("writeProfileTar and readTarEntry", () => {
  it("round-trip the storage state and the profile manifest", async () => {
    // Prepare
    const storageState = aStorageState();
    const profile = aProfileManifest();

    // Act
    const tar = await writeProfileTar({ storageState, profile });

    // Assess
    const state = await readTarEntry(Readable.from([tar]), storageStateEntry);
    const manifest = await readTarEntry(Readable.from([tar]), profileEntry);
    expect(JSON.parse(String(state))).toEqual(storageState);
    expect(JSON.parse(String(manifest))).toEqual(profile);
  });
});

describe("readTarEntry", () => {
  it("returns undefined when the archive has no such entry", async () => {
    // Prepare
    const tar = await packTar([{ name: "notes.txt", content: "hello" }]);

    // Act
    const entry = await readTarEntry(Readable.from([tar]), storageStateEntry);

    // Assess
    expect(entry).toBeUndefined();
  });

  it("finds an entry stored with a leading ./", async () => {
    // Prepare
    const tar = await packTar([{ name: "./storage_state.json", content: "{}" }]);

    // Act
    const entry = await readTarEntry(Readable.from([tar]), storageStateEntry);

    // Assess
    expect(String(entry)).toBe("{}");
  });

  it("reads the source to its end, past the entry it returns", async () => {
    // Prepare
    const tar = await packTar([
      { name: storageStateEntry, content: "{}" },
      { name: "big.bin", content: randomBytes(256 * 1024) },
      { name: "after.txt", content: "tail" },
    ]);
    let sourceEnded = false;
    async function* chunks() {
      for (let offset = 0; offset < tar.length; offset += 1000) yield tar.subarray(offset, offset + 1000);
      sourceEnded = true;
    }

    // Act
    const entry = await readTarEntry(chunks(), storageStateEntry);

    // Assess
    expect(String(entry)).toBe("{}");
    expect(sourceEnded).toBe(true);
  });

  it("leaves no listener behind on the extractor however often it waits for it", async () => {
    // Prepare
    const tar = await packTar([
      { name: storageStateEntry, content: "{}" },
      { name: "big.bin", content: randomBytes(4 * 1024 * 1024) },
    ]);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    async function* chunks() {
      for (let offset = 0; offset < tar.length; offset += 64 * 1024) yield tar.subarray(offset, offset + 64 * 1024);
    }

    // Act
    const entry = await readTarEntry(chunks(), storageStateEntry);
    await new Promise((done) => setImmediate(done));
    process.off("warning", onWarning);

    // Assess
    expect(String(entry)).toBe("{}");
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });

  it("rejects an entry over the size limit", async () => {
    // Prepare
    const tar = await packTar([{ name: storageStateEntry, content: Buffer.alloc(2048) }]);

    // Act
    const read = readTarEntry(Readable.from([tar]), storageStateEntry, 1024);

    // Assess
    await expect(read).rejects.toThrow(InvalidArchiveError);
    await expect(read).rejects.toThrow("storage_state.json is 2048 bytes, over the 1024 byte limit");
  });

  it("rejects bytes that are not a tar", async () => {
    // Prepare
    const garbage = randomBytes(4096);

    // Act
    const read = readTarEntry(Readable.from([garbage]), storageStateEntry);

    // Assess
    await expect(read).rejects.toThrow(InvalidArchiveError);
    await expect(read).rejects.toThrow("not a valid tar archive: invalid tar header");
  });

  it("rejects a truncated tar", async () => {
    // Prepare
    const tar = await packTar([{ name: storageStateEntry, content: Buffer.alloc(5000, "x") }]);

    // Act
    const read = readTarEntry(Readable.from([tar.subarray(0, 3000)]), storageStateEntry);

    // Assess
    await expect(read).rejects.toThrow("not a valid tar archive: the archive is truncated");
  });

  it("rethrows an error of the source unchanged", async () => {
    // Prepare
    const tar = await packTar([{ name: storageStateEntry, content: "{}" }]);
    const failure = new Error("connection reset");
    async function* failing() {
      yield tar.subarray(0, 512);
      throw failure;
    }

    // Act
    const read = readTarEntry(failing(), storageStateEntry);

    // Assess
    await expect(read).rejects.toBe(failure);
  });
});
