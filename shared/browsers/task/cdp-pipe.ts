import type { Readable, Writable } from "node:stream";

/**
 * Chromium's `--remote-debugging-pipe` framing: it reads commands from its fd 3 and writes answers
 * and events to its fd 4, each message one JSON text followed by a NUL byte.
 */
export interface CdpPipe {
  send(message: string): void;
}

export function cdpPipe(toBrowser: Writable, fromBrowser: Readable, onMessage: (message: string) => void): CdpPipe {
  // A message may arrive split across chunks, and one chunk may hold several messages.
  let partial: Buffer[] = [];
  // A write can fail only once the browser has exited, which its owner learns from the process itself.
  toBrowser.on("error", () => {});
  fromBrowser.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(0); end !== -1; end = chunk.indexOf(0, start)) {
      partial.push(chunk.subarray(start, end));
      const message = Buffer.concat(partial).toString("utf8");
      partial = [];
      start = end + 1;
      onMessage(message);
    }
    if (start < chunk.length) partial.push(chunk.subarray(start));
  });
  return {
    send(message) {
      toBrowser.write(`${message}\0`);
    },
  };
}
