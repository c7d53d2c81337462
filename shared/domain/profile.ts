export interface Profile {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}

/** Profile, pool and credential names: what the API promises to accept, and nothing else. */
export const namePattern = /^[A-Za-z0-9._-]{1,255}$/;

/** What the name guard holds: enough to link a connection without reading the profile. */
export interface ProfileRef {
  id: string;
  name: string;
}

export interface ProfileStore {
  /** The org's profile of that name, creating `candidate` when there is none; race-free. */
  getOrCreateByName(org: string, candidate: Profile): Promise<ProfileRef>;
  findByName(org: string, name: string): Promise<ProfileRef | undefined>;
}
