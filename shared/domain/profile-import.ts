import { validateUpload } from "../archive/validate.ts";
import { NotFoundError } from "./errors.ts";
import { toProfileResource } from "./profile.ts";
import type { ProfileArchivesDeps } from "./profile-archives.ts";
import { resolveProfile } from "./profiles.ts";

/** Importing an archive: the only operation that reads tar, so only its route carries the tar reader. */
export function profileImportCore(deps: ProfileArchivesDeps) {
  const now = () => (deps.now ?? (() => new Date()))().toISOString();

  return {
    /** Validates the upload completely before it replaces anything, so a bad one changes nothing. */
    async importArchive(org: string, idOrName: string, contentType: string | undefined, body: Buffer) {
      const profile = await resolveProfile(deps.profiles, org, idOrName);
      const upload = await validateUpload(contentType, body);
      await deps.archives.put(org, profile.id, upload.kind, upload.storedBytes);
      const updated = await deps.profiles.setArchive(org, profile.id, {
        kind: upload.kind,
        size: upload.storedBytes.length,
        saved_at: now(),
      });
      if (!updated) {
        await deps.archives.remove(org, profile.id, upload.kind);
        throw new NotFoundError(`profile '${idOrName}' not found`);
      }
      if (profile.archive && profile.archive.kind !== upload.kind) {
        await deps.archives.remove(org, profile.id, profile.archive.kind);
      }
      return toProfileResource(updated);
    },
  };
}
