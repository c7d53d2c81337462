import { s3ArchiveStore } from "../archive/archive-store.ts";
import { createS3Client } from "../aws/s3.ts";
import { perConfig } from "./config.ts";

export const archives = perConfig((config) => {
  const s3 = createS3Client({ region: config.AWS_REGION, endpoint: config.S3_ENDPOINT });
  return { s3, store: s3ArchiveStore(s3, config.BUCKET_NAME) };
});
