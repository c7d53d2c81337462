/**
 * Runs s3rver on a worker thread: started by `startS3Local`, told its directory through
 * workerData, it answers with its port and closes the server when told to stop.
 */
import { createReadStream, ReadStream } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { parentPort, workerData } from "node:worker_threads";

/** The part of s3rver we use; it ships no types, so it is loaded untyped and cast to this. */
interface S3rverServer {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  store: { getObject(...args: unknown[]): Promise<{ content: unknown } | null> };
}

/**
 * s3rver reads an object in the file stream's default 64 KiB pieces: a file read on the thread pool
 * and a buffer each. Served in 1 MiB pieces, a large archive costs its thread far less CPU
 * (docs/performance.md), CPU that a download through `npm start` shares with the service on a
 * small machine. The bytes and the protocol are s3rver's own.
 */
const objectReadBytes = 1024 * 1024;

function readObjectsInLargePieces(store: S3rverServer["store"]): void {
  const getObject = store.getObject.bind(store);
  store.getObject = async (...args) => {
    const object = await getObject(...args);
    const content = object?.content;
    if (!object || !(content instanceof ReadStream)) return object;
    const { path, start, end } = content as ReadStream & { start?: number; end?: number };
    content.destroy();
    return Object.assign(object, { content: createReadStream(path, { start, end, highWaterMark: objectReadBytes }) });
  };
}

type S3rverConstructor = new (options: { address: string; port: number; directory: string; silent: boolean }) => S3rverServer;

export type S3WorkerMessage = { started: number } | { failed: string } | { stopped: true };

const S3rver = createRequire(import.meta.url)("s3rver") as S3rverConstructor;
const { directory } = workerData as { directory: string };
const port = parentPort;
if (!port) throw new Error("s3-worker.ts runs only as a worker thread");

const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true });
readObjectsInLargePieces(server.store);
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
