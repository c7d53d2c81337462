import { pack } from "tar-stream";
import { buffer } from "node:stream/consumers";
import type { StorageState } from "#shared/archive/storage-state.ts";
import type { ProfileManifest } from "#shared/archive/tar.ts";

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
