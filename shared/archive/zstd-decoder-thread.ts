import type { EventEmitter } from "node:events";
import type { Readable, Writable } from "node:stream";
import { Worker } from "node:worker_threads";
import type { DecoderCommand, DecoderReport, DecoderSetup } from "#shared/archive/zstd-decoder-worker.ts";
import { requireZstdSupport } from "#shared/archive/zstd-support.ts";

// The decoding is all in the worker, so a bundle with this module may carry nothing else that needs zstd.
requireZstdSupport();

/**
 * Streaming zstd decompression on a thread of its own.
 *
 * Decoding on the event loop that also writes the response leaves the decoder idle while the loop
 * writes, and hands the loop a new buffer for every chunk to collect. Here a worker
 * (zstd-decoder-worker.ts) keeps the decoder busy and hands its output over in large buffers that
 * move between the threads without a copy, while the event loop only copies compressed bytes into
 * shared input slots and writes the decoded buffers out.
 */

/**
 * Socket reads are 64 KiB at most: a slot gathers many, and every slot the decoder takes up or
 * hands back costs both threads a wake-up.
 */
const inputSlotBytes = 2 * 1024 * 1024;
const inputSlots = 4;
/**
 * Large outputs for the same reason: each one the decoder fills is a round trip through the thread
 * pool and a write for the event loop. Memory stays at a few of these whatever the download's size.
 */
const outputBytes = 4 * 1024 * 1024;
const maxOutputsInFlight = 3;
/** Threads kept for the next download; more concurrent downloads start threads of their own. */
const maxIdleThreads = 2;

/**
 * From source the worker runs as TypeScript next to this file; a bundle carries it built as .mjs
 * next to itself (infra/constructs/bundling.ts).
 */
const workerUrl = new URL(import.meta.url.endsWith(".ts") ? "./zstd-decoder-worker.ts" : "./zstd-decoder-worker.mjs", import.meta.url);

/** ES2024's `ArrayBuffer.prototype.transfer`, which Node 22 has and the ES2023 library the project compiles against does not declare. */
type DetachableArrayBuffer = ArrayBuffer & { transfer(newByteLength: number): ArrayBuffer };

/** A worker and its shared input slots, reused by one download after another. */
class DecoderThread {
  readonly input = Buffer.from(new SharedArrayBuffer(inputSlotBytes * inputSlots));
  readonly worker: Worker;

  constructor() {
    const workerData: DecoderSetup = { input: this.input.buffer as SharedArrayBuffer, inputSlotBytes, outputBytes, maxOutputsInFlight };
    this.worker = new Worker(workerUrl, { workerData });
    // An idle thread must not keep the process alive.
    this.worker.unref();
    // One that fails while idle is not reused (a download's own listener reports a failure during it).
    this.worker.on("error", () => forgetIdleThread(this));
  }

  /** Resolves once `sink` has ended with every decoded byte; on failure `sink` is destroyed. */
  run(source: Readable, sink: Writable): Promise<void> {
    const { input, worker } = this;
    const command = (message: DecoderCommand) => worker.postMessage(message);
    return new Promise<void>((resolve, reject) => {
      let inputPublished = 0;
      let inputConsumed = 0;
      let inputFill = 0;
      /** The part of a chunk that found no free input slot; the source waits meanwhile. */
      let held: Buffer | undefined;
      let sourceEnded = false;
      let inputEnded = false;
      let decoded = false;
      let pendingWrites = 0;
      let settled = false;

      const listeners: [EventEmitter, string, Parameters<EventEmitter["on"]>[1]][] = [
        [worker, "message", onMessage],
        [worker, "error", fail],
        [sink, "error", fail],
        [sink, "close", onSinkClose],
        [source, "data", onData],
        [source, "end", onSourceEnd],
        [source, "error", fail],
      ];
      const cleanUp = () => {
        settled = true;
        for (const [emitter, event, listener] of listeners) emitter.off(event, listener);
      };
      function fail(error: Error): void {
        if (settled) return;
        cleanUp();
        // The worker is left mid-stream, waiting for input or releases that will not come: it is not reused.
        void worker.terminate();
        source.destroy();
        sink.destroy(error);
        reject(error);
      }
      const succeed = () => {
        if (settled) return;
        cleanUp();
        releaseThread(this);
        resolve();
      };
      function onSinkClose(): void {
        fail(Object.assign(new Error("the client closed the connection before the download ended"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
      }

      const publishInput = () => {
        command({ kind: "input", slot: inputPublished % inputSlots, bytes: inputFill });
        inputPublished += 1;
        inputFill = 0;
      };
      /** Copies what fits into free input slots; returns the rest. */
      const take = (chunk: Buffer): Buffer | undefined => {
        let offset = 0;
        while (offset < chunk.length) {
          if (inputPublished - inputConsumed >= inputSlots) return chunk.subarray(offset);
          const copied = chunk.copy(input, (inputPublished % inputSlots) * inputSlotBytes + inputFill, offset, offset + inputSlotBytes - inputFill);
          inputFill += copied;
          offset += copied;
          if (inputFill === inputSlotBytes) publishInput();
        }
        return undefined;
      };
      /** A partly filled slot goes to the decoder at once when it has nothing else to do. */
      const feedIdleDecoder = () => {
        if (inputFill > 0 && inputConsumed === inputPublished) publishInput();
      };
      const endInput = () => {
        if (inputEnded) return;
        inputEnded = true;
        if (inputFill > 0) publishInput();
        command({ kind: "end" });
      };

      function onData(chunk: Buffer): void {
        held = take(chunk);
        if (held) source.pause();
        else feedIdleDecoder();
      }
      function onSourceEnd(): void {
        sourceEnded = true;
        if (!held) endInput();
      }
      const onInputFreed = () => {
        inputConsumed += 1;
        if (held) {
          held = take(held);
          if (held) return;
          if (sourceEnded) endInput();
          else source.resume();
        }
        if (!inputEnded) feedIdleDecoder();
      };
      // The close listener stays on: a sink that closes before it finishes has not delivered the end.
      const endWhenWritten = () => {
        if (decoded && pendingWrites === 0) sink.end((error?: Error | null) => (error ? fail(error) : succeed()));
      };
      const onWritten = (output: ArrayBuffer, error?: Error | null) => {
        if (settled) return;
        if (error) return fail(error);
        pendingWrites -= 1;
        // Detached, its memory goes back to the allocator now, for the decoder's next buffer, rather than at some later collection.
        (output as DetachableArrayBuffer).transfer(0);
        command({ kind: "released" });
        endWhenWritten();
      };
      function onMessage(message: DecoderReport): void {
        switch (message.kind) {
          case "output":
            pendingWrites += 1;
            sink.write(Buffer.from(message.output), (error) => onWritten(message.output, error));
            return;
          case "inputFreed":
            return onInputFreed();
          case "done":
            decoded = true;
            return endWhenWritten();
          case "failed":
            return fail(new Error(`zstd decoding failed: ${message.message}`));
        }
      }

      for (const [emitter, event, listener] of listeners) emitter.on(event, listener);
      command({ kind: "start" });
    });
  }
}

const idleThreads: DecoderThread[] = [];

function forgetIdleThread(thread: DecoderThread): void {
  const index = idleThreads.indexOf(thread);
  if (index >= 0) idleThreads.splice(index, 1);
}

function releaseThread(thread: DecoderThread): void {
  if (idleThreads.length < maxIdleThreads) idleThreads.push(thread);
  else void thread.worker.terminate();
}

/**
 * Writes the decompressed content of the zstd stream `source` into `sink` and ends it; rejects
 * (with `sink` destroyed) when the source fails, the bytes do not decode or the sink closes early.
 * `sink` must be done with a chunk when it calls back for it, as sockets and HTTP responses are:
 * the chunk's memory is then freed (its buffer detached), so a Transform that kept chunks queued
 * would find them emptied.
 */
export function zstdDecompressInto(source: Readable, sink: Writable): Promise<void> {
  return (idleThreads.pop() ?? new DecoderThread()).run(source, sink);
}
