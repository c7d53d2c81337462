import type { Readable, Writable } from "node:stream";
import { openDownload, parseDownloadFormat, type Download } from "../archive/download.ts";
import { ConflictError, NotFoundError } from "./errors.ts";
import type { ArchiveBlobStore, ProfileStore } from "./profile.ts";
import { resolveProfile } from "./profiles.ts";

export interface ProfileArchivesDeps {
  profiles: ProfileStore;
  archives: ArchiveBlobStore;
  now?: () => Date;
}

/**
 * Downloading a profile's saved archive, and deleting the profile with it. Apart from profilesCore
 * so only these routes carry the archive store; importing (with its tar reader) is profile-import.ts.
 */
export function profileArchivesCore(deps: ProfileArchivesDeps) {
  const resolve = (org: string, idOrName: string) => resolveProfile(deps.profiles, org, idOrName);

  return {
    async remove(org: string, idOrName: string) {
      const profile = await resolve(org, idOrName);
      const result = await deps.profiles.remove(org, profile.id);
      if (result.outcome === "missing") throw new NotFoundError(`profile '${idOrName}' not found`);
      if (result.outcome === "inUse") {
        throw new ConflictError(`profile '${profile.name}' is used by auth connections: delete them first`);
      }
      if (profile.archive) await deps.archives.remove(org, profile.id, profile.archive.kind);
    },

    async download(org: string, idOrName: string, format: string | undefined): Promise<Download & { body: Readable | ((response: Writable) => Promise<void>) }> {
      const requested = parseDownloadFormat(format);
      const profile = await resolve(org, idOrName);
      const stored = profile.archive && (await deps.archives.open(org, profile.id, profile.archive.kind));
      if (!profile.archive || !stored) {
        throw new NotFoundError(
          `profile '${profile.name}' has no saved session yet: complete a login on one of its connections or import an archive`,
        );
      }
      const download = openDownload(profile.archive, requested, profile.name);
      const source = stored.body as Readable;
      const { convert } = download;
      return { ...download, body: convert ? (response) => convert(source, response) : source };
    },
  };
}
