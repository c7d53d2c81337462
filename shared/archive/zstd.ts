import { compress } from "@mongodb-js/zstd";
import { constants, createZstdCompress, createZstdDecompress } from "node:zlib";
import type { Transform } from "node:stream";

const frameMagic = [0x28, 0xb5, 0x2f, 0xfd];

export function isZstdFrame(buf: Uint8Array): boolean {
  return frameMagic.every((byte, i) => buf[i] === byte);
}

/** Whole-buffer compression; fine for archives that are already in memory. */
export async function compressZstd(buf: Uint8Array): Promise<Buffer> {
  return compress(Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength));
}

export function zstdCompressStream(): Transform {
  // The checksum lets whoever decompresses the stored archive later notice corruption.
  return createZstdCompress({ params: { [constants.ZSTD_c_checksumFlag]: 1 } });
}

/** Honours backpressure, so memory stays bounded whatever the decompressed size. */
export function zstdDecompressStream(): Transform {
  return createZstdDecompress();
}

/**
 * Says why `buf` is not a sequence of complete zstd frames, or returns undefined when it is.
 * Node's decoder ends silently on a truncated frame, so only a walk over the block headers
 * (cheap: no decompression) tells a complete archive from a cut-off one.
 */
export function zstdFramingProblem(buf: Uint8Array): string | undefined {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let offset = 0;
  while (offset < buf.byteLength) {
    const magic = offset + 8 <= buf.byteLength ? view.getUint32(offset, true) : undefined;
    if (magic === 0xfd2fb528) {
      const end = frameEnd(buf, offset);
      if (end === undefined) return `the zstd frame at byte ${offset} is truncated or malformed`;
      offset = end;
    } else if (magic !== undefined && (magic & 0xfffffff0) === 0x184d2a50) {
      offset += 8 + view.getUint32(offset + 4, true);
    } else {
      return offset === 0 ? "not a zstd frame" : `unexpected bytes after the zstd frame ending at byte ${offset}`;
    }
  }
  return offset === buf.byteLength ? undefined : "the last zstd frame is truncated";
}

/** Byte offset just past the frame starting at `start`, following RFC 8878 section 3.1.1. */
function frameEnd(buf: Uint8Array, start: number): number | undefined {
  const descriptor = buf[start + 4];
  if (descriptor === undefined || (descriptor & 0x08) !== 0) return undefined;
  const contentSizeFlag = descriptor >> 6;
  const singleSegment = (descriptor & 0x20) !== 0;
  const hasChecksum = (descriptor & 0x04) !== 0;
  const dictionaryIdBytes = [0, 1, 2, 4][descriptor & 0x03] ?? 0;
  const contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][contentSizeFlag] ?? 0;
  let offset = start + 5 + (singleSegment ? 0 : 1) + dictionaryIdBytes + contentSizeBytes;
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
