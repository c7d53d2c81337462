import { pipeline, type Readable } from "node:stream";
import { openDownload, parseDownloadFormat, type Download } from "../archive/download.ts";
import { validateUpload } from "../archive/validate.ts";
import { newId } from "../ids.ts";
import type { ConnectionStore } from "./connection.ts";
import { ConflictError, NotFoundError } from "./errors.ts";
import { toProfileResource, type ArchiveBlobStore, type Profile, type ProfileStore } from "./profile.ts";

export interface ProfilesCoreDeps {
  profiles: ProfileStore;
  connections: ConnectionStore;
  archives: ArchiveBlobStore;
  now?: () => Date;
}

const idPattern = /^pr_[0-9a-z]{20}$/;

export function profilesCore(deps: ProfilesCoreDeps) {
  const now = () => (deps.now ?? (() => new Date()))().toISOString();

  /** `{id_or_name}`: an id when it has the shape of one and exists, otherwise a name. */
  async function resolve(org: string, idOrName: string): Promise<Profile> {
    const byId = idPattern.test(idOrName) ? await deps.profiles.get(org, idOrName) : undefined;
    if (byId) return byId;
    const ref = await deps.profiles.findByName(org, idOrName);
    const byName = ref ? await deps.profiles.get(org, ref.id) : undefined;
    if (!byName) throw new NotFoundError(`profile '${idOrName}' not found`);
    return byName;
  }

  return {
    resolve,

    async create(org: string, input: { name?: string }) {
      const id = newId("pr");
      const createdAt = now();
      const profile: Profile = {
        id,
        name: input.name ?? id,
        created_at: createdAt,
        updated_at: createdAt,
        last_used_at: null,
        archive: null,
      };
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

    async remove(org: string, idOrName: string) {
      const profile = await resolve(org, idOrName);
      const result = await deps.profiles.remove(org, profile.id);
      if (result.outcome === "missing") throw new NotFoundError(`profile '${idOrName}' not found`);
      if (result.outcome === "inUse") {
        throw new ConflictError(`profile '${profile.name}' is used by auth connections: delete them first`);
      }
      if (profile.archive) await deps.archives.remove(org, profile.id, profile.archive.kind);
    },

    /** Validates the upload completely before it replaces anything, so a bad one changes nothing. */
    async importArchive(org: string, idOrName: string, contentType: string | undefined, body: Buffer) {
      const profile = await resolve(org, idOrName);
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

    async download(org: string, idOrName: string, format: string | undefined): Promise<Download & { body: Readable }> {
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
      if (!download.transform) return { ...download, body: source };
      // pipeline, not pipe: a failing S3 read must fail the converted stream too, not stall it.
      const converted = download.transform();
      pipeline(source, converted, () => undefined);
      return { ...download, body: converted };
    },
  };
}

export type ProfilesCore = ReturnType<typeof profilesCore>;

function matchesQuery(profile: Profile, query: string | undefined): boolean {
  if (!query) return true;
  const needle = query.toLowerCase();
  return profile.id.includes(needle) || profile.name.toLowerCase().includes(needle);
}
