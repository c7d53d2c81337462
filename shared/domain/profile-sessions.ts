import { buffer } from "node:stream/consumers";
import { noSessionIfTooLarge } from "../archive/errors.ts";
import { mergeStorageStates, sessionArchive, storedStorageState } from "../archive/session-archive.ts";
import type { StorageState } from "../archive/storage-state.ts";
import type { ArchiveBlobStore, ArchiveRef, ProfileStore } from "./profile.ts";

export interface ProfileSessionsDeps {
  profiles: ProfileStore;
  archives: ArchiveBlobStore;
  now?: () => Date;
}

/** The session a profile holds: what health checks load and what a successful login saves. */
export function profileSessionsCore(deps: ProfileSessionsDeps) {
  const now = () => (deps.now ?? (() => new Date()))().toISOString();

  async function read(org: string, profileId: string, kind: ArchiveRef["kind"]): Promise<StorageState | undefined> {
    const stored = await deps.archives.open(org, profileId, kind);
    return stored && storedStorageState(kind, await buffer(stored.body));
  }

  /**
   * Straight from the archive store, current format first: every health check loads a session, and
   * an archive object exists only while its profile records it (import and save write the object
   * first and remove it if the profile is gone; profile delete removes it).
   */
  async function load(org: string, profileId: string): Promise<StorageState | undefined> {
    return (await read(org, profileId, "tar.zst")) ?? (await read(org, profileId, "json"));
  }

  return {
    load,

    /**
     * Lays the login's session over the profile's saved one and stores the result as a current
     * archive. False when the profile is gone.
     */
    async save(org: string, profile: { id: string; name: string }, domains: string[], session: StorageState): Promise<boolean> {
      const savedAt = now();
      const previous = await deps.profiles.get(org, profile.id);
      if (!previous) return false;
      const saved = previous.archive ? await read(org, profile.id, previous.archive.kind).catch(noSessionIfTooLarge) : undefined;
      const merged = mergeStorageStates(saved, session);
      const archive = await sessionArchive(merged, { id: profile.id, name: profile.name, saved_at: savedAt, domains });
      await deps.archives.put(org, profile.id, "tar.zst", archive);
      const updated = await deps.profiles.setArchive(org, profile.id, { kind: "tar.zst", size: archive.length, saved_at: savedAt });
      if (!updated) {
        await deps.archives.remove(org, profile.id, "tar.zst");
        return false;
      }
      if (previous.archive?.kind === "json") await deps.archives.remove(org, profile.id, "json");
      return true;
    },
  };
}

export type ProfileSessions = ReturnType<typeof profileSessionsCore>;
