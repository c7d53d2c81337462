import { randomBytes } from "node:crypto";
import { buffer } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { InvalidArchiveError, UnsupportedArchiveTypeError } from "#shared/archive/errors.ts";
import type { AppError } from "#shared/errors.ts";
import { errorStatus } from "#shared/http/error-statuses.ts";
import { readTarEntry, storageStateEntry, writeProfileTar } from "#shared/archive/tar.ts";
import { validateUpload } from "#shared/archive/validate.ts";
import { compressZstd, zstdCompressStream, zstdDecompressStream } from "#shared/archive/zstd.ts";
import { aProfileManifest, aStorageState, packTar } from "../../support/archive-builders.ts";

async function aProfileTar(): Promise<Buffer> {
  return writeProfileTar({ storageState: aStorageState(), profile: aProfileManifest() });
}

async function decompress(compressed: Buffer): Promise<Buffer> {
  const decoder = zstdDecompressStream();
  decoder.end(compressed);
  return buffer(decoder);
}

describe("validateUpload of application/zstd", () => {
  it("stores the archive as uploaded, and its storage state reads back through the decompress stream", async () => {
    // Prepare
    const archive = await compressZstd(await aProfileTar());

    // Act
    const upload = await validateUpload("application/zstd", archive);

    // Assess
    expect(upload.kind).toBe("tar.zst");
    expect(upload.storedBytes).toBe(archive);
    expect(upload.storageState).toEqual(aStorageState());
    const decoder = zstdDecompressStream();
    decoder.end(upload.storedBytes);
    const entry = await readTarEntry(decoder, storageStateEntry);
    expect(JSON.parse(String(entry))).toEqual(aStorageState());
  });

  it("rejects bytes that are not zstd", async () => {
    // Act
    const upload = validateUpload("application/zstd", await aProfileTar());

    // Assess
    await expect(upload).rejects.toThrow(InvalidArchiveError);
    await expect(upload).rejects.toThrow("not a valid zstd archive: it does not start with the zstd magic number");
  });

  it("rejects a truncated archive", async () => {
    // Prepare
    const archive = await compressZstd(await aProfileTar());

    // Act
    const upload = validateUpload("application/zstd", archive.subarray(0, archive.length - 8));

    // Assess
    await expect(upload).rejects.toThrow("not a valid zstd archive: the zstd frame is truncated or malformed");
  });

  it("rejects an archive whose compressed content is corrupt", async () => {
    // Prepare
    const tar = await packTar([
      { name: storageStateEntry, content: JSON.stringify(aStorageState()) },
      { name: "noise.bin", content: randomBytes(64 * 1024) },
    ]);
    const encoder = zstdCompressStream();
    encoder.end(tar);
    const archive = await buffer(encoder);
    // Mostly incompressible noise, so the middle byte is stored verbatim and only the checksum notices.
    archive[Math.floor(archive.length / 2)]! ^= 0xff;

    // Act
    const upload = validateUpload("application/zstd", archive);

    // Assess
    await expect(upload).rejects.toThrow(InvalidArchiveError);
    await expect(upload).rejects.toThrow("not a valid zstd archive: Restored data doesn't match checksum");
  });

  it("rejects a valid zstd frame that does not hold a tar", async () => {
    // Prepare
    const archive = await compressZstd(randomBytes(4096));

    // Act
    const upload = validateUpload("application/zstd", archive);

    // Assess
    await expect(upload).rejects.toThrow("not a valid tar archive: invalid tar header");
  });

  it("rejects a tar.zst without storage_state.json", async () => {
    // Prepare
    const archive = await compressZstd(await packTar([{ name: "profile.json", content: "{}" }]));

    // Act
    const upload = validateUpload("application/zstd", archive);

    // Assess
    await expect(upload).rejects.toThrow("the archive holds no storage_state.json");
  });

  it("rejects a tar.zst whose storage_state.json has the wrong shape, naming the field", async () => {
    // Prepare
    const state = { ...aStorageState(), origins: [{ origin: 7, localStorage: [] }] };
    const archive = await compressZstd(await packTar([{ name: storageStateEntry, content: JSON.stringify(state) }]));

    // Act
    const upload = validateUpload("application/zstd", archive);

    // Assess
    await expect(upload).rejects.toThrow("storage_state.json: origins[0].origin: expected string");
  });
});

describe("validateUpload of application/x-tar", () => {
  it("stores the tar compressed, and the stored bytes decode back to the uploaded tar", async () => {
    // Prepare
    const tar = await aProfileTar();

    // Act
    const upload = await validateUpload("application/x-tar", tar);

    // Assess
    expect(upload.kind).toBe("tar.zst");
    expect(upload.storageState).toEqual(aStorageState());
    expect((await decompress(upload.storedBytes)).equals(tar)).toBe(true);
    await expect(validateUpload("application/zstd", upload.storedBytes)).resolves.toMatchObject({ kind: "tar.zst" });
  });

  it("rejects a tar without storage_state.json", async () => {
    // Prepare
    const tar = await packTar([{ name: "cookies.txt", content: "" }]);

    // Act
    const upload = validateUpload("application/x-tar", tar);

    // Assess
    await expect(upload).rejects.toThrow(InvalidArchiveError);
    await expect(upload).rejects.toThrow("the archive holds no storage_state.json");
  });

  it("rejects bytes that are not a tar", async () => {
    // Act
    const upload = validateUpload("application/x-tar", Buffer.from(JSON.stringify(aStorageState())));

    // Assess
    await expect(upload).rejects.toThrow("not a valid tar archive: the archive is truncated");
  });
});

describe("validateUpload of application/json", () => {
  it("keeps a storage state document as uploaded, whatever the content type's parameters", async () => {
    // Prepare
    const body = Buffer.from(JSON.stringify(aStorageState()));

    // Act
    const upload = await validateUpload("Application/JSON; charset=utf-8", body);

    // Assess
    expect(upload).toEqual({ kind: "json", storedBytes: body, storageState: aStorageState() });
  });

  it("rejects a document of the wrong shape, naming the field", async () => {
    // Prepare
    const state = aStorageState();
    const body = Buffer.from(JSON.stringify({ ...state, cookies: [{ ...state.cookies[0], expires: "never" }] }));

    // Act
    const upload = validateUpload("application/json", body);

    // Assess
    await expect(upload).rejects.toThrow(InvalidArchiveError);
    await expect(upload).rejects.toThrow("body: cookies[0].expires: expected number");
  });
});

describe("validateUpload of anything else", () => {
  it.each(["application/zstd", "application/x-tar", "application/json"])("rejects an empty %s body", async (type) => {
    // Act
    const upload = validateUpload(type, Buffer.alloc(0));

    // Assess
    await expect(upload).rejects.toThrow(InvalidArchiveError);
    await expect(upload).rejects.toThrow("empty body");
  });

  it.each([
    ["application/gzip", "unsupported content type 'application/gzip'"],
    ["text/plain", "unsupported content type 'text/plain'"],
    [undefined, "missing content type"],
  ])("rejects content type %s with a 415, listing the accepted ones", async (type, problem) => {
    // Act
    const upload = validateUpload(type, Buffer.from("{}"));

    // Assess
    await expect(upload).rejects.toThrow(UnsupportedArchiveTypeError);
    await expect(upload).rejects.toMatchObject({ code: "unsupported_media_type" });
    expect(errorStatus(await upload.then(() => expect.unreachable(), (error: AppError) => error))).toBe(415);
    await expect(upload).rejects.toThrow(
      `${problem}: send one of application/zstd, application/x-tar, application/json`,
    );
  });
});
