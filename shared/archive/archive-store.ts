import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Readable } from "node:stream";
import type { StoredArchiveKind } from "#shared/archive/validate.ts";

export interface S3Settings {
  region: string;
  /** Set only against a stand-in (s3rver); unset in AWS. */
  endpoint?: string;
}

export function createS3Client(settings: S3Settings): S3Client {
  return new S3Client({
    region: settings.region,
    ...(settings.endpoint
      ? {
          endpoint: settings.endpoint,
          forcePathStyle: true,
          credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
          // The default checksums send a streamed body aws-chunked, and s3rver would store that framing as the object.
          requestChecksumCalculation: "WHEN_REQUIRED",
          responseChecksumValidation: "WHEN_REQUIRED",
        }
      : {}),
  });
}

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
   * A stream needs its length up front: a single PutObject must declare it, and the multipart
   * upload that would not (`@aws-sdk/lib-storage`) is not a dependency.
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

export function s3ArchiveStore(s3: S3Client, bucket: string): ArchiveStore {
  const objectKey = (org: string, profileId: string, kind: StoredArchiveKind) =>
    `profiles/${keySegment(org, "org")}/${keySegment(profileId, "profile id")}/state.${kind}`;

  return {
    objectKey,

    async put(org: string, profileId: string, kind: StoredArchiveKind, body: Buffer | Readable, contentLength?: number) {
      const size = Buffer.isBuffer(body) ? body.byteLength : contentLength;
      if (size === undefined) throw new Error("a streamed archive needs its content length");
      const key = objectKey(org, profileId, kind);
      const response = await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: size, ContentType: contentTypes[kind] }),
      );
      if (response.ETag === undefined) throw new Error(`S3 returned no ETag for ${key}`);
      return { key, size, etag: response.ETag };
    },

    async open(org, profileId, kind) {
      const key = objectKey(org, profileId, kind);
      try {
        const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        if (!(response.Body instanceof Readable) || response.ContentLength === undefined) {
          throw new Error(`S3 returned no readable body of known length for ${key}`);
        }
        return { body: response.Body, size: response.ContentLength };
      } catch (error) {
        if (error instanceof NoSuchKey) return undefined;
        throw error;
      }
    },

    async remove(org, profileId, kind) {
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(org, profileId, kind) }));
    },
  };
}
