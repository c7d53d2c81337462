import type { Config } from "../config.ts";
import type { ArchiveBlobStore } from "../domain/profile.ts";
import { perConfig } from "./config.ts";
import { sdkClientSettings } from "./sdk-settings.ts";

/** The answer to a PutObject comes after its whole body is sent: an archive gets longer than a table call. */
const uploadTimeoutMs = 10_000;

/**
 * A stand-in (s3rver) is addressed path-style, and gets checksums only where S3 requires them:
 * s3rver stores the aws-chunked framing of a checksummed streamed upload inside the object.
 */
export function s3ClientSettings(config: Config) {
  const standIn = config.S3_ENDPOINT === undefined ? {} : ({ forcePathStyle: true, requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" } as const);
  return { ...sdkClientSettings(config, config.S3_ENDPOINT, { requestTimeout: uploadTimeoutMs }), ...standIn };
}

/**
 * The archive store, whose S3 client is loaded at its first call rather than at a cold start: the
 * S3 client is the largest part of a profile route's bundle, and a route that finds no archive to
 * read or delete never calls it.
 */
export const archives = perConfig((config): ArchiveBlobStore => {
  let loaded: Promise<ArchiveBlobStore> | undefined;
  const store = () =>
    (loaded ??= Promise.all([import("@aws-sdk/client-s3"), import("../archive/archive-store.ts")]).then(([{ S3Client }, { s3ArchiveStore }]) =>
      s3ArchiveStore(new S3Client(s3ClientSettings(config)), config.BUCKET_NAME),
    ));
  return {
    put: async (org, profileId, kind, body) => (await store()).put(org, profileId, kind, body),
    open: async (org, profileId, kind) => (await store()).open(org, profileId, kind),
    remove: async (org, profileId, kind) => (await store()).remove(org, profileId, kind),
  };
});
