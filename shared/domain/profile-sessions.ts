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

/** A profile's saved session as it was read, with which write of the archive it came from. */
export interface SavedSession {
  state: StorageState;
  kind: ArchiveRef["kind"];
  etag: string;
}

/** The session a profile holds: what health checks load and what a successful login saves. */
export function profileSessionsCore(deps: ProfileSessionsDeps) {
  const now = () => (deps.now ?? (() => new Date()))().toISOString();

  async function read(org: string, profileId: string, kind: ArchiveRef["kind"]): Promise<SavedSession | undefined> {
    const stored = await deps.archives.open(org, profileId, kind);
    return stored && { state: await storedStorageState(kind, await buffer(stored.body)), kind, etag: stored.etag };
  }

  /**
   * Straight from the archive store, current format first: every health check loads a session, and
   * an archive object exists only while its profile records it (import and save write the object
   * first and remove it if the profile is gone; profile delete removes it).
   */
  async function load(org: string, profileId: string): Promise<SavedSession | undefined> {
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
      const saved = previous.archive ? (await read(org, profile.id, previous.archive.kind).catch(noSessionIfTooLarge))?.state : undefined;
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

    /**
     * Stores `renewed` in place of `read`, the session it renews, only while the profile still holds
     * that very archive: a login (or another check) that saved since wins, and false says the renewal
     * was dropped. The record is the arbiter: its `saved_at` is claimed first, conditionally, and only
     * while the object is still the write `read` came from; the object is then replaced only while it
     * is still that write (S3's If-Match), so a login that saves between the two keeps its session.
     */
    async saveRenewed(org: string, profileId: string, domains: string[], read: SavedSession, renewed: StorageState): Promise<boolean> {
      // A session imported as JSON is left as imported: a login's save makes it a current archive.
      if (read.kind !== "tar.zst") return false;
      const profile = await deps.profiles.get(org, profileId);
      if (profile?.archive?.kind !== "tar.zst") return false;
      // The record's saved_at names the archive read only while the object is still the write it came from.
      if ((await deps.archives.etag(org, profileId, "tar.zst")) !== read.etag) return false;
      const savedAt = now();
      const archive = await sessionArchive(renewed, { id: profile.id, name: profile.name, saved_at: savedAt, domains });
      const claimed = await deps.profiles.setArchive(org, profileId, { kind: "tar.zst", size: archive.length, saved_at: savedAt }, profile.archive.saved_at);
      if (!claimed) return false;
      return deps.archives.replace(org, profileId, "tar.zst", archive, read.etag);
    },
  };
}

export type ProfileSessions = ReturnType<typeof profileSessionsCore>;
