import { buffer } from "node:stream/consumers";
import { mergeStorageStates, sessionArchive, storedStorageState } from "../archive/session-archive.ts";
import type { StorageState } from "../archive/storage-state.ts";
import type { ArchiveBlobStore, ProfileStore } from "./profile.ts";

export interface ProfileSessionsDeps {
  profiles: ProfileStore;
  archives: ArchiveBlobStore;
  now?: () => Date;
}

/** The session a profile holds: what health checks load and what a successful login saves. */
export function profileSessionsCore(deps: ProfileSessionsDeps) {
  const now = () => (deps.now ?? (() => new Date()))().toISOString();

  async function load(org: string, profileId: string): Promise<StorageState | undefined> {
    const profile = await deps.profiles.get(org, profileId);
    if (!profile?.archive) return undefined;
    const stored = await deps.archives.open(org, profileId, profile.archive.kind);
    if (!stored) return undefined;
    return storedStorageState(profile.archive.kind, await buffer(stored.body));
  }

  return {
    load,

    /**
     * Lays the login's session over the profile's saved one and stores the result as a current
     * archive. False when the profile is gone.
     */
    async save(org: string, profile: { id: string; name: string }, domains: string[], session: StorageState): Promise<boolean> {
      const savedAt = now();
      const merged = mergeStorageStates(await load(org, profile.id), session);
      const archive = await sessionArchive(merged, { id: profile.id, name: profile.name, saved_at: savedAt, domains });
      await deps.archives.put(org, profile.id, "tar.zst", archive);
      const previous = await deps.profiles.get(org, profile.id);
      const updated = await deps.profiles.setArchive(org, profile.id, { kind: "tar.zst", size: archive.length, saved_at: savedAt });
      if (previous?.archive?.kind === "json") await deps.archives.remove(org, profile.id, "json");
      return updated !== undefined;
    },
  };
}

export type ProfileSessions = ReturnType<typeof profileSessionsCore>;
