import type { ArchiveBlobStore } from "../domain/profile.ts";
import { perConfig } from "./config.ts";

/**
 * The archive store, whose S3 client is evaluated and built at its first call rather than at a cold
 * start: the S3 client is the largest part of a profile route's bundle, and a route that finds no
 * archive to read or delete never calls it.
 */
export const archives = perConfig((config): ArchiveBlobStore => {
  let loaded: Promise<ArchiveBlobStore> | undefined;
  const store = () => (loaded ??= import("./s3-archives.ts").then(({ s3Archives }) => s3Archives(config)));
  return {
    put: async (org, profileId, kind, body) => (await store()).put(org, profileId, kind, body),
    open: async (org, profileId, kind) => (await store()).open(org, profileId, kind),
    etag: async (org, profileId, kind) => (await store()).etag(org, profileId, kind),
    replace: async (org, profileId, kind, body, etag) => (await store()).replace(org, profileId, kind, body, etag),
    remove: async (org, profileId, kind) => (await store()).remove(org, profileId, kind),
  };
});
