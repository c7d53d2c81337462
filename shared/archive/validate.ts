import { buffer } from "node:stream/consumers";
import { ArchiveTooLargeError, InvalidArchiveError, UnsupportedArchiveTypeError } from "#shared/archive/errors.ts";
import { parseStorageState } from "#shared/archive/storage-state.ts";
import type { StorageState } from "#shared/archive/storage-state.ts";
import { readTarEntry, storageStateEntry } from "#shared/archive/tar.ts";
import { zstdCompressStream, zstdDecompressFrame, zstdFrameProblem } from "#shared/archive/zstd.ts";

/** How a profile is stored: a current tar.zst archive, or a legacy storageState JSON document. */
export type StoredArchiveKind = "tar.zst" | "json";

export const acceptedUploadTypes = ["application/zstd", "application/x-tar", "application/json"] as const;

export interface ValidatedUpload {
  kind: StoredArchiveKind;
  /** What to store: the upload itself, or for a plain tar its zstd compression. */
  storedBytes: Buffer;
  storageState: StorageState;
}

export async function validateUpload(contentType: string | undefined, body: Buffer): Promise<ValidatedUpload> {
  const mediaType = contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (!acceptedUploadTypes.some((accepted) => accepted === mediaType)) {
    throw new UnsupportedArchiveTypeError(contentType, acceptedUploadTypes);
  }
  if (body.byteLength === 0) throw new InvalidArchiveError("empty body");
  if (mediaType === "application/json") return { kind: "json", storedBytes: body, storageState: parseStorageState(body, "body") };
  if (mediaType === "application/x-tar") {
    const storageState = await readStorageState([body]);
    const compressor = zstdCompressStream();
    compressor.end(body);
    return { kind: "tar.zst", storedBytes: await buffer(compressor), storageState };
  }
  return { kind: "tar.zst", storedBytes: body, storageState: await readZstdStorageState(body) };
}

/**
 * Most bytes a stored or uploaded tar.zst may decompress to: a profile's session is a few KB to a
 * few MB, and every health check and login decompresses it again.
 */
export const maxDecompressedArchiveBytes = 64 * 1024 * 1024;

/** Throws ArchiveTooLargeError, without decoding past the cap, for an archive over maxDecompressedArchiveBytes. */
export async function readZstdStorageState(body: Buffer): Promise<StorageState> {
  const frameProblem = zstdFrameProblem(body);
  if (frameProblem) throw new InvalidArchiveError(`not a valid zstd archive: ${frameProblem}`);
  try {
    return await readStorageState(zstdDecompressFrame(body, maxDecompressedArchiveBytes));
  } catch (error) {
    if (error instanceof InvalidArchiveError || error instanceof ArchiveTooLargeError) throw error;
    throw new InvalidArchiveError(`not a valid zstd archive: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function readStorageState(tar: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<StorageState> {
  const entry = await readTarEntry(tar, storageStateEntry);
  if (entry === undefined) throw new InvalidArchiveError(`the archive holds no ${storageStateEntry}`);
  return parseStorageState(entry, storageStateEntry);
}
