import { extract, pack } from "tar-stream";
import type { Header } from "tar-stream";
import type { Readable } from "node:stream";
import { InvalidArchiveError } from "#shared/archive/errors.ts";
import type { StorageState } from "#shared/archive/storage-state.ts";

export const storageStateEntry = "storage_state.json";
export const profileEntry = "profile.json";

/** An entry is read into memory whole, so its size is capped (a tar.zst as a whole is capped in validate.ts). */
export const maxTarEntryBytes = 64 * 1024 * 1024;

/** `profile.json`: which profile the archive holds and which domains its session covers. */
export interface ProfileManifest {
  id: string;
  name: string;
  saved_at: string;
  domains: string[];
}

export async function writeProfileTar(contents: { storageState: StorageState; profile: ProfileManifest }): Promise<Buffer> {
  const archive = pack();
  archive.entry({ name: storageStateEntry }, Buffer.from(JSON.stringify(contents.storageState, null, 2)));
  archive.entry({ name: profileEntry }, Buffer.from(JSON.stringify(contents.profile, null, 2)));
  archive.finalize();
  return concatChunks(archive);
}

/**
 * Returns the bytes of the regular file `name` (undefined when absent), reading the whole archive
 * so a corrupt tail is noticed. Tar problems throw InvalidArchiveError; an error of `source`
 * itself is rethrown unchanged, so the caller can tell a bad tar from a failing source.
 */
export async function readTarEntry(
  source: Iterable<Uint8Array> | AsyncIterable<Uint8Array> | Readable,
  name: string,
  maxBytes = maxTarEntryBytes,
): Promise<Buffer | undefined> {
  const entries = extract();
  let sourceError: unknown;
  const feeding = feed(source, entries).catch((error: unknown) => {
    sourceError = error;
    entries.destroy(error as Error);
  });
  let found: Buffer | undefined;
  try {
    for await (const entry of entries) {
      if (isRegularFile(entry.header) && entryPath(entry.header.name) === name) found = await readEntry(entry, name, maxBytes);
      else entry.resume();
    }
    await feeding;
  } catch (error) {
    if (error === sourceError || error instanceof InvalidArchiveError) throw error;
    throw new InvalidArchiveError(`not a valid tar archive: ${describeTarError(error)}`);
  }
  if (sourceError !== undefined) throw sourceError;
  return found;
}

/**
 * Writes the source into the extractor, honouring its backpressure. Not `stream.pipeline`: it ends
 * by aborting an AbortController, whose DOMException captures a stack on every health check
 * (its cost in docs/performance.md).
 */
async function feed(source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, entries: ReturnType<typeof extract>): Promise<void> {
  for await (const chunk of source) {
    if (entries.destroyed) return;
    if (!entries.write(chunk)) await drainedOrClosed(entries);
  }
  // streamx types `end` as taking the last chunk; there is none.
  entries.end(undefined);
}

/** Each wait removes both of its listeners, however it ends: a large archive waits thousands of times. */
function drainedOrClosed(entries: ReturnType<typeof extract>): Promise<void> {
  return new Promise<void>((resume) => {
    const done = () => {
      entries.off("drain", done);
      entries.off("close", done);
      resume();
    };
    entries.on("drain", done);
    entries.on("close", done);
  });
}

function isRegularFile(header: Header): boolean {
  return header.type === "file" || header.type === "contiguous-file";
}

/** `tar -cf a.tar -C dir .` stores `./storage_state.json`; it is the same file. */
function entryPath(name: string): string {
  return name.replace(/^(\.\/)+/, "");
}

async function readEntry(entry: AsyncIterable<unknown> & { header: Header }, name: string, maxBytes: number): Promise<Buffer> {
  if (entry.header.size > maxBytes) {
    throw new InvalidArchiveError(`${name} is ${entry.header.size} bytes, over the ${maxBytes} byte limit`);
  }
  return concatChunks(entry);
}

/** tar-stream's streams are typed as yielding unknown; they yield Buffers. */
async function concatChunks(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk as Uint8Array);
  return Buffer.concat(chunks);
}

/** tar-stream's wording suggests gunzip, which misleads for a zstd upload. */
function describeTarError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith("Invalid tar header")) return "invalid tar header";
  if (message === "Unexpected end of data") return "the archive is truncated";
  return message;
}
