import { BucketAlreadyExists, BucketAlreadyOwnedByYou, CreateBucketCommand } from "@aws-sdk/client-s3";
import { mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createS3Client } from "#shared/archive/archive-store.ts";

export interface S3Local {
  endpoint: string;
  stop(): Promise<void>;
}

/** The part of s3rver we use; it ships no types, so it is loaded untyped and cast to this. */
interface S3rverServer {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}

type S3rverConstructor = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
}) => S3rverServer;

const S3rver = createRequire(import.meta.url)("s3rver") as S3rverConstructor;

/**
 * Starts s3rver in-process: persisted under `dataDir` across restarts, or in a temp dir removed
 * on stop. s3rver always stores on disk, and its default directory is shared by every instance.
 */
export async function startS3Local(options: { dataDir?: string } = {}): Promise<S3Local> {
  const directory = options.dataDir ? resolve(options.dataDir) : await mkdtemp(join(tmpdir(), "s3rver-"));
  if (options.dataDir) mkdirSync(directory, { recursive: true });
  const removeTemporaryData = () => (options.dataDir ? Promise.resolve() : rm(directory, { recursive: true, force: true }));
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (error) {
    await removeTemporaryData();
    throw error;
  }
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: async () => {
      await server.close();
      await removeTemporaryData();
    },
  };
}

/** Creates the bucket unless it is already there; on a local stand-in every existing bucket is ours. */
export async function ensureBucket(endpoint: string, bucket: string): Promise<void> {
  const client = createS3Client({ region: "us-east-1", endpoint });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if (!(error instanceof BucketAlreadyExists || error instanceof BucketAlreadyOwnedByYou)) throw error;
  } finally {
    client.destroy();
  }
}
