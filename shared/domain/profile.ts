import { newId } from "../ids.ts";
import type { Page } from "./list-page.ts";

/** Where a profile's saved session lives; null until a login or an import stores one. */
export interface ArchiveRef {
  kind: "tar.zst" | "json";
  size: number;
  saved_at: string;
}

export interface Profile {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  archive: ArchiveRef | null;
}

/** A profile as it is first stored: no session saved yet; one created without a name is named by its id. */
export function newProfile(name: string | undefined, createdAt: string): Profile {
  const id = newId("pr");
  return { id, name: name ?? id, created_at: createdAt, updated_at: createdAt, last_used_at: null, archive: null };
}

export function toProfileResource(profile: Profile) {
  return {
    id: profile.id,
    name: profile.name,
    created_at: profile.created_at,
    updated_at: profile.updated_at,
    last_used_at: profile.last_used_at,
  };
}

export type ProfileResource = ReturnType<typeof toProfileResource>;

/** Profile, pool and credential names: the characters the API promises to accept, and nothing else. */
export const namePattern = /^[A-Za-z0-9._-]{1,255}$/;

/**
 * A URL path treats `.` and `..` as "this" and "the parent" segment (clients resolve them, `%2E`
 * spellings too, before a request is sent), so such a name could never be reached through
 * `{id_or_name}`; every all-dots name is refused so the rule is one a person can remember.
 */
export function isOnlyDots(name: string): boolean {
  return /^\.+$/.test(name);
}

export const onlyDotsProblem = "must not be only dots: a URL resolves '.' and '..' path segments away, so the name could never be reached in a path";

/** What the name guard holds: enough to link a connection without reading the profile. */
export interface ProfileRef {
  id: string;
  name: string;
}

export type RenameOutcome = { outcome: "renamed"; profile: Profile } | { outcome: "nameTaken" } | { outcome: "missing" };

export type RemoveOutcome = { outcome: "removed"; profile: Profile } | { outcome: "inUse" } | { outcome: "missing" };

export interface ProfileStore {
  findByName(org: string, name: string): Promise<ProfileRef | undefined>;
  /** False when the name is taken. */
  insert(org: string, profile: Profile): Promise<boolean>;
  get(org: string, id: string): Promise<Profile | undefined>;
  list(request: { org: string; offset: number; limit: number; matches?: (profile: Profile) => boolean }): Promise<Page<Profile>>;
  rename(org: string, id: string, name: string, now: string): Promise<RenameOutcome>;
  /** Only while no connection uses the profile. */
  remove(org: string, id: string): Promise<RemoveOutcome>;
  /**
   * Records a newly stored archive; undefined when the profile is gone, or, given `replacing` (a
   * `saved_at`), when the archive recorded is no longer the one saved then.
   */
  setArchive(org: string, id: string, archive: ArchiveRef, replacing?: string): Promise<Profile | undefined>;
}

/** Where archive bytes live (S3 in AWS, s3rver locally). */
export interface ArchiveBlobStore {
  put(org: string, profileId: string, kind: ArchiveRef["kind"], body: Buffer): Promise<unknown>;
  /** `etag`: which write of the object this is (S3's ETag). */
  open(org: string, profileId: string, kind: ArchiveRef["kind"]): Promise<{ body: NodeJS.ReadableStream; size: number; etag: string } | undefined>;
  /** The ETag of the object as stored now, or undefined when there is none. */
  etag(org: string, profileId: string, kind: ArchiveRef["kind"]): Promise<string | undefined>;
  /**
   * Puts `body` only while the object stored is still the write `etag` names (S3's conditional
   * write, If-Match); false when another write replaced it meanwhile.
   */
  replace(org: string, profileId: string, kind: ArchiveRef["kind"], body: Buffer, etag: string): Promise<boolean>;
  remove(org: string, profileId: string, kind: ArchiveRef["kind"]): Promise<void>;
}
