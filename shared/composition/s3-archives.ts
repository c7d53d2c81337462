import { S3Client } from "@aws-sdk/client-s3";
import { s3ArchiveStore } from "../store/archive-store.ts";
import { s3ReplayStore } from "../store/replay-store.ts";
import { resourceName, type Config } from "../config.ts";
import { perConfig } from "./config.ts";
import { outagesAsServiceUnavailable, sdkClientSettings } from "./sdk-settings.ts";

/**
 * A stand-in (s3rver) is addressed path-style, and gets checksums only where S3 requires them:
 * s3rver stores the aws-chunked framing of a checksummed streamed upload inside the object.
 */
export function s3ClientSettings(config: Config) {
  const standIn = config.S3_ENDPOINT === undefined ? {} : ({ forcePathStyle: true, requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" } as const);
  return { ...sdkClientSettings(config, config.S3_ENDPOINT), ...standIn };
}

/** One client per process, shared by the archive and replay stores: a login step saves both. */
const s3Client = perConfig((config): S3Client => {
  const s3 = new S3Client(s3ClientSettings(config));
  outagesAsServiceUnavailable(s3);
  return s3;
});

export function s3Archives(config: Config) {
  return s3ArchiveStore(s3Client(config), resourceName(config, "BUCKET_NAME"));
}

export function s3Replays(config: Config) {
  return s3ReplayStore(s3Client(config), resourceName(config, "BUCKET_NAME"));
}
