import type { Readable } from "node:stream";
import type { S3Objects } from "#shared/aws/s3.ts";
import type { StoredArchiveKind } from "#shared/archive/validate.ts";

export interface StoredArchive {
  key: string;
  size: number;
  etag: string;
}

/** Where profile archives live: the only code that talks to S3 about them. */
export interface ArchiveStore {
  objectKey(org: string, profileId: string, kind: StoredArchiveKind): string;
  put(org: string, profileId: string, kind: StoredArchiveKind, body: Buffer): Promise<StoredArchive>;
  /**
   * A stream needs its length up front: a single PutObject must declare it (this store does not
   * make multipart uploads, which would not).
   */
  put(org: string, profileId: string, kind: StoredArchiveKind, body: Readable, contentLength: number): Promise<StoredArchive>;
  open(org: string, profileId: string, kind: StoredArchiveKind): Promise<{ body: Readable; size: number } | undefined>;
  /** Succeeds whether or not the archive exists. */
  remove(org: string, profileId: string, kind: StoredArchiveKind): Promise<void>;
}

const contentTypes: Record<StoredArchiveKind, string> = {
  "tar.zst": "application/zstd",
  json: "application/json",
};

/** Org names may be `.` or `..`, which a path-mapped store (s3rver, URL normalisation) would resolve. */
const safeSegment = /^(?!\.{1,2}$)[A-Za-z0-9._-]+$/;

function keySegment(value: string, what: string): string {
  if (!safeSegment.test(value)) throw new Error(`${what} '${value}' cannot be part of an archive key`);
  return value;
}

export function s3ArchiveStore(s3: S3Objects, bucket: string): ArchiveStore {
  const objectKey = (org: string, profileId: string, kind: StoredArchiveKind) =>
    `profiles/${keySegment(org, "org")}/${keySegment(profileId, "profile id")}/state.${kind}`;

  return {
    objectKey,

    async put(org: string, profileId: string, kind: StoredArchiveKind, body: Buffer | Readable, contentLength?: number) {
      const size = Buffer.isBuffer(body) ? body.byteLength : contentLength;
      if (size === undefined) throw new Error("a streamed archive needs its content length");
      const key = objectKey(org, profileId, kind);
      const { etag } = await s3.put(bucket, key, { body, size, contentType: contentTypes[kind] });
      return { key, size, etag };
    },

    open: (org, profileId, kind) => s3.get(bucket, objectKey(org, profileId, kind)),

    remove: (org, profileId, kind) => s3.remove(bucket, objectKey(org, profileId, kind)),
  };
}
