import type { ConnectionStore } from "./connection.ts";
import { ConflictError, NotFoundError } from "./errors.ts";
import { findByIdOrName } from "./id-or-name.ts";
import { newProfile, toProfileResource, type Profile, type ProfileStore } from "./profile.ts";

export interface ProfilesCoreDeps {
  profiles: ProfileStore;
  connections: ConnectionStore;
  now?: () => Date;
}

/** `{id_or_name}`: an id when it has the shape of one and exists, otherwise a name. */
export async function resolveProfile(profiles: ProfileStore, org: string, idOrName: string): Promise<Profile> {
  const profile = await findByIdOrName(idOrName, "pr", {
    byId: (id) => profiles.get(org, id),
    idOfName: async (name) => (await profiles.findByName(org, name))?.id,
  });
  if (!profile) throw new NotFoundError(`profile '${idOrName}' not found`);
  return profile;
}

/** Profile records; what touches their archives is in profile-archives.ts. */
export function profilesCore(deps: ProfilesCoreDeps) {
  const now = () => (deps.now ?? (() => new Date()))().toISOString();
  const resolve = (org: string, idOrName: string) => resolveProfile(deps.profiles, org, idOrName);

  return {
    async create(org: string, input: { name?: string }) {
      const profile = newProfile(input.name, now());
      if (!(await deps.profiles.insert(org, profile))) {
        const existing = await deps.profiles.findByName(org, profile.name);
        throw new ConflictError(`a profile named '${profile.name}' already exists`, existing?.id);
      }
      return toProfileResource(profile);
    },

    async get(org: string, idOrName: string) {
      return toProfileResource(await resolve(org, idOrName));
    },

    async list(org: string, input: { name?: string; query?: string; limit: number; offset: number }) {
      if (input.name !== undefined) {
        const ref = await deps.profiles.findByName(org, input.name);
        const profile = ref && (await deps.profiles.get(org, ref.id));
        const matching = profile && matchesQuery(profile, input.query) ? [profile] : [];
        return { items: matching.slice(input.offset, input.offset + input.limit).map(toProfileResource), hasMore: false };
      }
      const page = await deps.profiles.list({
        org,
        offset: input.offset,
        limit: input.limit,
        matches: input.query ? (profile) => matchesQuery(profile, input.query) : undefined,
      });
      return { items: page.items.map(toProfileResource), hasMore: page.hasMore };
    },

    async rename(org: string, idOrName: string, name: string) {
      const profile = await resolve(org, idOrName);
      const result = await deps.profiles.rename(org, profile.id, name, now());
      if (result.outcome === "missing") throw new NotFoundError(`profile '${idOrName}' not found`);
      if (result.outcome === "nameTaken") {
        const existing = await deps.profiles.findByName(org, name);
        throw new ConflictError(`a profile named '${name}' already exists`, existing?.id);
      }
      await deps.connections.renameProfile(org, profile.id, name);
      return toProfileResource(result.profile);
    },
  };
}

function matchesQuery(profile: Profile, query: string | undefined): boolean {
  if (!query) return true;
  const needle = query.toLowerCase();
  return profile.id.includes(needle) || profile.name.toLowerCase().includes(needle);
}
