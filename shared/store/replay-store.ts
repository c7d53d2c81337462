import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { replayKeyPrefix, type ReplayBlobStore } from "../domain/replays.ts";
import { keySegment, openObject } from "./archive-store.ts";

/** A trace of a few megabytes takes longer than the clients' answer timeout to upload. */
const uploadTimeoutMs = 8_000;

/** Replays in the archive bucket, under `replays/<org>/<connection>/<replay>.zip`: the only code that talks to S3 about them. */
export function s3ReplayStore(s3: S3Client, bucket: string): ReplayBlobStore {
  const objectKey = (org: string, connectionId: string, replayId: string) =>
    `${replayKeyPrefix}${keySegment(org, "org")}/${keySegment(connectionId, "connection id")}/${keySegment(replayId, "replay id")}.zip`;

  return {
    async put(org, connectionId, replayId, zip) {
      const put = new PutObjectCommand({ Bucket: bucket, Key: objectKey(org, connectionId, replayId), Body: zip, ContentLength: zip.byteLength, ContentType: "application/zip" });
      await s3.send(put, { requestTimeout: uploadTimeoutMs });
    },

    open(org, connectionId, replayId) {
      return openObject(s3, bucket, objectKey(org, connectionId, replayId));
    },
  };
}
