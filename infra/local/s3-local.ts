import { mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import { BucketAlreadyExists, BucketAlreadyOwnedByYou, CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { s3ClientSettings } from "#shared/composition/s3-archives.ts";
import { loadConfig } from "#shared/config.ts";
import type { S3WorkerMessage } from "./s3-worker.ts";

export interface S3Local {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * Starts s3rver on a worker thread, so serving archives does not take turns with the gateway on
 * one event loop (docs/performance.md has what that cost). Data persists under `dataDir` across
 * restarts, or lives in a temp dir removed on stop; s3rver's default directory is shared by every
 * instance, so one is always given.
 */
export async function startS3Local(options: { dataDir?: string } = {}): Promise<S3Local> {
  const directory = options.dataDir ? resolve(options.dataDir) : await mkdtemp(join(tmpdir(), "s3rver-"));
  if (options.dataDir) mkdirSync(directory, { recursive: true });
  const removeTemporaryData = () => (options.dataDir ? Promise.resolve() : rm(directory, { recursive: true, force: true }));
  const worker = new Worker(new URL("./s3-worker.ts", import.meta.url), { workerData: { directory } });
  const reply = () =>
    new Promise<S3WorkerMessage>((done, fail) => {
      worker.once("message", done);
      worker.once("error", fail);
    });
  const started = await reply().catch((error: unknown) => ({ failed: error instanceof Error ? error.message : String(error) }));
  if (!("started" in started)) {
    await worker.terminate();
    await removeTemporaryData();
    throw new Error(`s3rver did not start: ${"failed" in started ? started.failed : "unexpected message"}`);
  }
  return {
    endpoint: `http://127.0.0.1:${started.started}`,
    stop: async () => {
      const stopped = reply();
      worker.postMessage("stop");
      await stopped;
      await worker.terminate();
      await removeTemporaryData();
    },
  };
}

/** Creates the bucket unless it is already there; on a local stand-in every existing bucket is ours. */
export async function ensureBucket(endpoint: string, bucket: string): Promise<void> {
  const client = new S3Client(s3ClientSettings(loadConfig({ ...process.env, S3_ENDPOINT: endpoint })));
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if (!(error instanceof BucketAlreadyOwnedByYou || error instanceof BucketAlreadyExists)) throw error;
  } finally {
    client.destroy();
  }
}
