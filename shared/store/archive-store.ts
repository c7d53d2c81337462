import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, NoSuchKey, NotFound, PutObjectCommand, S3ServiceException, type S3Client } from "@aws-sdk/client-s3";
import { Readable } from "node:stream";
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
  /** `etag`: which write of the object this is. */
  open(org: string, profileId: string, kind: StoredArchiveKind): Promise<{ body: Readable; size: number; etag: string } | undefined>;
  /** The object's ETag as stored now, or undefined when there is none. */
  etag(org: string, profileId: string, kind: StoredArchiveKind): Promise<string | undefined>;
  /** Puts `body` only while the object is still the write `etag` names (If-Match); false when another write replaced it. */
  replace(org: string, profileId: string, kind: StoredArchiveKind, body: Buffer, etag: string): Promise<boolean>;
  /** Succeeds whether or not the archive exists. */
  remove(org: string, profileId: string, kind: StoredArchiveKind): Promise<void>;
}

/**
 * S3 answers a PutObject once the whole body is in, so an upload waits longer than the clients'
 * answer timeout; three attempts of it still end within a function's 29 s.
 */
const uploadTimeoutMs = 8_000;

const contentTypes: Record<StoredArchiveKind, string> = {
  "tar.zst": "application/zstd",
  json: "application/json",
};

/** Org names may be `.` or `..`, which a path-mapped store (s3rver, URL normalisation) would resolve. */
const safeSegment = /^(?!\.{1,2}$)[A-Za-z0-9._-]+$/;

export function keySegment(value: string, what: string): string {
  if (!safeSegment.test(value)) throw new Error(`${what} '${value}' cannot be part of an archive key`);
  return value;
}

/** The object's body as a stream with its length, or undefined when there is no such object. */
export async function openObject(s3: S3Client, bucket: string, Key: string): Promise<{ body: Readable; size: number; etag: string } | undefined> {
  try {
    const { Body, ContentLength, ETag } = await s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
    if (!(Body instanceof Readable) || ContentLength === undefined || ETag === undefined) {
      if (Body instanceof Readable) Body.destroy();
      throw new Error(`S3 returned no streamed body with a length and an ETag for ${Key}`);
    }
    return { body: Body, size: ContentLength, etag: ETag };
  } catch (error) {
    if (error instanceof NoSuchKey) return undefined;
    throw error;
  }
}

export function s3ArchiveStore(s3: S3Client, bucket: string): ArchiveStore {
  const objectKey = (org: string, profileId: string, kind: StoredArchiveKind) =>
    `profiles/${keySegment(org, "org")}/${keySegment(profileId, "profile id")}/state.${kind}`;

  return {
    objectKey,

    async put(org: string, profileId: string, kind: StoredArchiveKind, body: Buffer | Readable, contentLength?: number) {
      const size = Buffer.isBuffer(body) ? body.byteLength : contentLength;
      if (size === undefined) throw new Error("a streamed archive needs its content length");
      const Key = objectKey(org, profileId, kind);
      const put = new PutObjectCommand({ Bucket: bucket, Key, Body: body, ContentLength: size, ContentType: contentTypes[kind] });
      const { ETag } = await s3.send(put, { requestTimeout: uploadTimeoutMs });
      if (ETag === undefined) throw new Error(`S3 returned no ETag for ${Key}`);
      return { key: Key, size, etag: ETag };
    },

    open(org, profileId, kind) {
      return openObject(s3, bucket, objectKey(org, profileId, kind));
    },

    async etag(org, profileId, kind) {
      try {
        return (await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(org, profileId, kind) }))).ETag;
      } catch (error) {
        if (error instanceof NotFound) return undefined;
        throw error;
      }
    },

    async replace(org, profileId, kind, body, etag) {
      const Key = objectKey(org, profileId, kind);
      const put = new PutObjectCommand({ Bucket: bucket, Key, Body: body, ContentLength: body.byteLength, ContentType: contentTypes[kind], IfMatch: etag });
      try {
        await s3.send(put, { requestTimeout: uploadTimeoutMs });
        return true;
      } catch (error) {
        // 412: the object is another write now; 409: a write of it raced this one; 404: it was removed. This one is not wanted then.
        if (error instanceof S3ServiceException && [404, 409, 412].includes(error.$metadata.httpStatusCode ?? 0)) return false;
        throw error;
      }
    },

    async remove(org, profileId, kind) {
      await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(org, profileId, kind) }));
    },
  };
}
