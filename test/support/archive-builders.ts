import { pack } from "tar-stream";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import type { StorageState } from "#shared/archive/storage-state.ts";
import { writeProfileTar, type ProfileManifest } from "#shared/archive/tar.ts";
import { zstdCompressStream } from "#shared/archive/zstd.ts";

export function aStorageState(): StorageState {
  return {
    cookies: [
      {
        name: "session",
        value: "abc123",
        domain: ".example.com",
        path: "/",
        expires: -1,
        httpOnly: true,
        secure: true,
        sameSite: "Lax",
      },
    ],
    origins: [{ origin: "https://example.com", localStorage: [{ name: "theme", value: "dark" }] }],
  };
}

export function aProfileManifest(): ProfileManifest {
  return { id: "pr_0123456789abcdefghjk", name: "work", saved_at: "2026-11-22T10:30:00.000Z", domains: ["example.com"] };
}

export async function packTar(entries: { name: string; content: string | Buffer }[]): Promise<Buffer> {
  const archive = pack();
  for (const entry of entries) archive.entry({ name: entry.name }, entry.content);
  archive.finalize();
  return buffer(archive as AsyncIterable<Buffer>);
}

/**
 * A zstd bomb that reads as a profile: a valid profile tar, then `zeroBytes` of zeros (which a tar
 * reader skips as empty blocks), compressed as a stream so the frame declares no size. Built from
 * one reused mebibyte of zeros, so nothing holds the expanded content.
 */
export async function aProfileArchiveBomb(zeroBytes: number): Promise<Buffer> {
  const tar = await writeProfileTar({ storageState: aStorageState(), profile: aProfileManifest() });
  const zeros = Buffer.alloc(1024 * 1024);
  function* content(): Generator<Buffer> {
    yield tar;
    for (let left = zeroBytes; left > 0; left -= zeros.length) yield zeros.subarray(0, Math.min(left, zeros.length));
  }
  return buffer(Readable.from(content()).pipe(zstdCompressStream()));
}
