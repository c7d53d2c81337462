/**
 * Runs s3rver on a worker thread: started by `startS3Local`, told its directory through
 * workerData, it answers with its port and closes the server when told to stop.
 */
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";

/** The part of s3rver we use; it ships no types, so it is loaded untyped and cast to this. */
interface S3rverServer {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}

type S3rverConstructor = new (options: { address: string; port: number; directory: string; silent: boolean }) => S3rverServer;

export type S3WorkerMessage = { started: number } | { failed: string } | { stopped: true };

const S3rver = createRequire(import.meta.url)("s3rver") as S3rverConstructor;
const { directory } = workerData as { directory: string };
const port = parentPort;
if (!port) throw new Error("s3-worker.ts runs only as a worker thread");

const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
try {
  const address = await server.run();
  port.postMessage({ started: address.port } satisfies S3WorkerMessage);
} catch (error) {
  port.postMessage({ failed: error instanceof Error ? error.message : String(error) } satisfies S3WorkerMessage);
}
port.once("message", async () => {
  await server.close();
  port.postMessage({ stopped: true } satisfies S3WorkerMessage);
  port.close();
});
