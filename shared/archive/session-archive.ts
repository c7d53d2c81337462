import { parseStorageState, type StorageState } from "./storage-state.ts";
import { writeProfileTar, type ProfileManifest } from "./tar.ts";
import { readZstdStorageState, type StoredArchiveKind } from "./validate.ts";
import { compressZstd } from "./zstd.ts";

/** The storage state inside a stored archive, whichever way it is stored. */
export async function storedStorageState(kind: StoredArchiveKind, stored: Buffer): Promise<StorageState> {
  return kind === "json" ? parseStorageState(stored) : readZstdStorageState(stored);
}

/** A current profile archive (tar.zst of storage_state.json and profile.json). */
export async function sessionArchive(storageState: StorageState, profile: ProfileManifest): Promise<Buffer> {
  return compressZstd(await writeProfileTar({ storageState, profile }));
}

/**
 * A login's session laid over the profile's saved one: cookies and origins of the login replace
 * those they name, the rest of the profile (other domains' sessions) stays.
 */
export function mergeStorageStates(saved: StorageState | undefined, login: StorageState): StorageState {
  if (!saved) return login;
  const cookieKey = (cookie: StorageState["cookies"][number]) => `${cookie.name}\u0000${cookie.domain}\u0000${cookie.path}`;
  const replaced = new Set(login.cookies.map(cookieKey));
  const origins = new Set(login.origins.map((origin) => origin.origin));
  return {
    ...saved,
    cookies: [...saved.cookies.filter((cookie) => !replaced.has(cookieKey(cookie))), ...login.cookies],
    origins: [...saved.origins.filter((origin) => !origins.has(origin.origin)), ...login.origins],
  };
}
