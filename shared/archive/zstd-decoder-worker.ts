/**
 * The decoder thread's program, started by zstd-decoder-thread.ts. One download after another, it
 * decodes the compressed bytes the event loop puts in the shared input slots and moves the decoded
 * bytes to the event loop in whole buffers, transferred rather than copied.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Transform } from "node:stream";
import { zstdDecompressStream } from "#shared/archive/zstd.ts";

/** Handed to the thread once, when it starts. */
export interface DecoderSetup {
  input: SharedArrayBuffer;
  inputSlotBytes: number;
  /** How large a buffer the decoder fills before handing it over. */
  outputBytes: number;
  /** Buffers handed over and not yet released: the decoder waits beyond this. */
  maxOutputsInFlight: number;
}

export type DecoderCommand =
  | { kind: "start" }
  | { kind: "input"; slot: number; bytes: number }
  | { kind: "end" }
  /** The sink is done with one of the outputs in flight. */
  | { kind: "released" };

export type DecoderReport =
  | { kind: "output"; output: ArrayBuffer }
  /** The decoder is done with the oldest input slot. */
  | { kind: "inputFreed" }
  | { kind: "done" }
  | { kind: "failed"; message: string };

const port = parentPort;
if (!port) throw new Error("zstd-decoder-worker.ts runs as the worker thread of zstd-decoder-thread.ts");
const setup = workerData as DecoderSetup;
const input = Buffer.from(setup.input);
const report = (message: DecoderReport, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

let decoder: Transform | undefined;
let decoded = false;
let inFlight = 0;
/** Decoded chunks that share the buffer the decoder is filling, in order. */
let pieces: Buffer[] = [];
let piecesBytes = 0;
/** Buffers wholly decoded, oldest first, waiting for room in flight. */
const ready: ArrayBuffer[] = [];
let sendQueued = false;

/**
 * A chunk is the reader's to keep, so once the chunks of one buffer add up to all of it, no one
 * else writes to that buffer and it can move to the other thread as it is. Pieces of a buffer that
 * never fills (the last one, or any other a decoder might leave part-filled) are copied instead.
 */
function take(chunk: Buffer): void {
  const buffer = chunk.buffer as ArrayBuffer;
  if (pieces[0] && pieces[0].buffer !== buffer) copyPieces();
  pieces.push(chunk);
  piecesBytes += chunk.length;
  if (piecesBytes === buffer.byteLength) {
    ready.push(buffer);
    pieces = [];
    piecesBytes = 0;
  }
}

function copyPieces(): void {
  if (piecesBytes === 0) return;
  // Not from Buffer's shared pool, whose memory could not be transferred.
  const copy = Buffer.allocUnsafeSlow(piecesBytes);
  let offset = 0;
  for (const piece of pieces) offset += piece.copy(copy, offset);
  ready.push(copy.buffer as ArrayBuffer);
  pieces = [];
  piecesBytes = 0;
}

/**
 * Sends once the decoder's callback has returned, by which time it has taken up its next piece of
 * work and let go of the buffer it filled.
 */
function queueSend(): void {
  if (sendQueued) return;
  sendQueued = true;
  queueMicrotask(send);
}

function send(): void {
  sendQueued = false;
  if (!decoder) return;
  for (let output = ready[0]; output && inFlight < setup.maxOutputsInFlight; output = ready[0]) {
    ready.shift();
    inFlight += 1;
    report({ kind: "output", output }, [output]);
  }
  if (ready.length > 0) decoder.pause();
  else if (!decoded) decoder.resume();
  else {
    decoder = undefined;
    report({ kind: "done" });
  }
}

function start(): void {
  decoded = false;
  inFlight = 0;
  pieces = [];
  piecesBytes = 0;
  ready.length = 0;
  const current = zstdDecompressStream(undefined, setup.outputBytes);
  current.on("data", (chunk: Buffer) => {
    take(chunk);
    queueSend();
  });
  current.on("end", () => {
    decoded = true;
    copyPieces();
    queueSend();
  });
  current.on("error", (error: Error) => {
    decoder = undefined;
    report({ kind: "failed", message: error.message });
  });
  decoder = current;
}

port.on("message", (command: DecoderCommand) => {
  switch (command.kind) {
    case "start":
      return start();
    case "input": {
      const offset = command.slot * setup.inputSlotBytes;
      // The decoder calls back once it has used up the slot's bytes: the event loop may refill it then.
      decoder?.write(input.subarray(offset, offset + command.bytes), (error) => {
        if (!error) report({ kind: "inputFreed" });
      });
      return;
    }
    case "end":
      decoder?.end();
      return;
    case "released":
      inFlight -= 1;
      return queueSend();
  }
});
