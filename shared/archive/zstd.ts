import { constants, createZstdCompress, createZstdDecompress, zstdCompress } from "node:zlib";
import type { Transform } from "node:stream";
import { promisify } from "node:util";

const frameMagic = [0x28, 0xb5, 0x2f, 0xfd];

export function isZstdFrame(buf: Uint8Array): boolean {
  return frameMagic.every((byte, i) => buf[i] === byte);
}

const zstdCompressBuffer = promisify(zstdCompress);

/**
 * Whole-buffer compression; fine for archives that are already in memory. Node's own zstd rather
 * than a native addon, so every Lambda bundle stays pure JavaScript: an x64 build machine cannot
 * ship an addon's arm64 binary.
 */
export async function compressZstd(buf: Uint8Array): Promise<Buffer> {
  return zstdCompressBuffer(buf);
}

export function zstdCompressStream(): Transform {
  // The checksum lets whoever decompresses the stored archive later notice corruption.
  return createZstdCompress({ params: { [constants.ZSTD_c_checksumFlag]: 1 } });
}

/**
 * Output chunk size of the decoder. zlib's 16 KiB default costs a callback per 16 KiB, which held
 * a download to a third of this speed; a few of these buffers in flight keep memory small.
 */
const decompressedChunkBytes = 1024 * 1024;

/** Honours backpressure, so memory stays bounded whatever the decompressed size. */
export function zstdDecompressStream(): Transform {
  return createZstdDecompress({ chunkSize: decompressedChunkBytes });
}

/**
 * Says why `buf` is not exactly one complete zstd frame, or returns undefined when it is.
 * Node 22's decoder ends silently on a truncated frame, and drops a frame that follows another
 * within one written chunk; walking the block headers (no decompression) catches both.
 */
export function zstdFrameProblem(buf: Uint8Array): string | undefined {
  if (!isZstdFrame(buf)) return "it does not start with the zstd magic number";
  const end = frameEnd(buf);
  if (end === undefined) return "the zstd frame is truncated or malformed";
  if (end < buf.byteLength) return `${buf.byteLength - end} bytes follow the zstd frame; send a single-frame archive`;
  return undefined;
}

/** Byte offset just past the frame that starts `buf`, following RFC 8878 section 3.1.1. */
function frameEnd(buf: Uint8Array): number | undefined {
  const descriptor = buf[4];
  if (descriptor === undefined || (descriptor & 0x08) !== 0) return undefined;
  const contentSizeFlag = descriptor >> 6;
  const singleSegment = (descriptor & 0x20) !== 0;
  const hasChecksum = (descriptor & 0x04) !== 0;
  const dictionaryIdBytes = [0, 1, 2, 4][descriptor & 0x03] ?? 0;
  const contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][contentSizeFlag] ?? 0;
  let offset = 5 + (singleSegment ? 0 : 1) + dictionaryIdBytes + contentSizeBytes;
  for (;;) {
    const b0 = buf[offset];
    const b1 = buf[offset + 1];
    const b2 = buf[offset + 2];
    if (b0 === undefined || b1 === undefined || b2 === undefined) return undefined;
    const header = b0 | (b1 << 8) | (b2 << 16);
    const last = (header & 1) === 1;
    const type = (header >> 1) & 3;
    const size = header >> 3;
    if (type === 3) return undefined;
    // An RLE block stores its one repeated byte; raw and compressed blocks store `size` bytes.
    offset += 3 + (type === 1 ? 1 : size);
    if (last) break;
  }
  offset += hasChecksum ? 4 : 0;
  return offset <= buf.byteLength ? offset : undefined;
}
