// A namespace import: named zstd imports would fail to link on a Node without zstd, before the check below could say why.
import * as zlib from "node:zlib";
import type { Transform } from "node:stream";
import { promisify } from "node:util";
import { ArchiveTooLargeError } from "#shared/archive/errors.ts";
import { requireZstdSupport } from "#shared/archive/zstd-support.ts";

requireZstdSupport();

const frameMagic = [0x28, 0xb5, 0x2f, 0xfd];

export function isZstdFrame(buf: Uint8Array): boolean {
  return frameMagic.every((byte, i) => buf[i] === byte);
}

const zstdCompressBuffer = promisify(zlib.zstdCompress);

/**
 * Whole-buffer compression; fine for archives that are already in memory. Node's own zstd rather
 * than a native addon, so every Lambda bundle stays pure JavaScript: an x64 build machine cannot
 * ship an addon's arm64 binary.
 */
export async function compressZstd(buf: Uint8Array): Promise<Buffer> {
  // The frame then declares its size, which lets the decoder size its output to it.
  return zstdCompressBuffer(buf, { pledgedSrcSize: buf.byteLength });
}

export function zstdCompressStream(): Transform {
  // The checksum lets whoever decompresses the stored archive later notice corruption.
  return zlib.createZstdCompress({ params: { [zlib.constants.ZSTD_c_checksumFlag]: 1 } });
}

/**
 * Largest output chunk of the decoder: zlib's 16 KiB default costs a callback per 16 KiB, and a few
 * of these buffers in flight keep memory small. Downloads ask for larger ones (zstd-decoder-worker.ts).
 */
const maxDecompressedChunkBytes = 1024 * 1024;
/** zlib refuses smaller chunks. */
const minDecompressedChunkBytes = 64;

/**
 * Honours backpressure, so memory stays bounded whatever the decompressed size. Given the size the
 * frame declares, a smaller archive gets an output chunk of its own size: a health check decodes a
 * session archive of a few KB, and a 1 MiB buffer for it costs more than the decoding
 * (docs/performance.md).
 */
export function zstdDecompressStream(declaredBytes?: number, maxChunkBytes = maxDecompressedChunkBytes): Transform {
  return zlib.createZstdDecompress({ chunkSize: outputChunkBytes(declaredBytes, maxChunkBytes) });
}

function outputChunkBytes(declaredBytes: number | undefined, maxChunkBytes: number): number {
  return Math.min(maxChunkBytes, Math.max(minDecompressedChunkBytes, declaredBytes ?? maxChunkBytes));
}

/**
 * A decoder that fails with ArchiveTooLargeError as soon as its output passes `maxOutputBytes`: a
 * frame of a few KB can expand to gigabytes, and the decoder stops at the cap rather than at the end.
 */
class CappedZstdDecompress extends zlib.ZstdDecompress {
  /** Decoded bytes so far. */
  outputBytes = 0;
  readonly maxOutputBytes: number;

  constructor(maxOutputBytes: number, options: zlib.ZstdOptions) {
    super(options);
    this.maxOutputBytes = maxOutputBytes;
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk instanceof Uint8Array) {
      this.outputBytes += chunk.byteLength;
      if (this.outputBytes > this.maxOutputBytes) {
        this.destroy(new ArchiveTooLargeError(this.maxOutputBytes));
        return false;
      }
    }
    return super.push(chunk, encoding);
  }
}

/** Streams the decoded content like zstdDecompressStream, failing once it passes `maxOutputBytes`. */
export function zstdDecompressCapped(maxOutputBytes: number, declaredBytes?: number): CappedZstdDecompress {
  return new CappedZstdDecompress(maxOutputBytes, { chunkSize: outputChunkBytes(declaredBytes, maxDecompressedChunkBytes) });
}

/** Frames declaring at most this much decode in one synchronous call. */
const inlineDecodeMaxBytes = 256 * 1024;

/**
 * The content of one frame held in memory, at most `maxOutputBytes` of it: past that, the frame's
 * declared size refuses it before any decoding, and the decoder stops once its output passes the cap
 * (ArchiveTooLargeError either way). A session archive (a few KB, its size declared) decodes in one
 * synchronous call: for that size the streaming decoder's setup and thread-pool round trips cost two
 * to four times the CPU of the decoding itself, on every health check. Larger or undeclared content
 * streams with bounded memory.
 */
export function zstdDecompressFrame(frame: Buffer, maxOutputBytes: number): Iterable<Buffer> | Transform {
  const declared = declaredContentSize(frame);
  if (declared !== undefined && declared > maxOutputBytes) throw new ArchiveTooLargeError(maxOutputBytes);
  if (declared !== undefined && declared <= inlineDecodeMaxBytes) {
    // The cap holds the decoder to the declared size, whatever the frame's blocks would expand to.
    return [zlib.zstdDecompressSync(frame, { maxOutputLength: Math.max(1, declared) })];
  }
  const decoder = zstdDecompressCapped(maxOutputBytes, declared);
  decoder.end(frame);
  return decoder;
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

/** The decompressed size the frame starting `buf` declares, when its header holds one. */
export function declaredContentSize(buf: Uint8Array): number | undefined {
  return frameHeader(buf)?.contentSize;
}

interface FrameHeader {
  /** Where the first block header starts. */
  blocksOffset: number;
  hasChecksum: boolean;
  contentSize?: number;
}

/** The frame header that starts `buf`, following RFC 8878 section 3.1.1.1; undefined when malformed. */
function frameHeader(buf: Uint8Array): FrameHeader | undefined {
  const descriptor = buf[4];
  if (!isZstdFrame(buf) || descriptor === undefined || (descriptor & 0x08) !== 0) return undefined;
  const contentSizeFlag = descriptor >> 6;
  const singleSegment = (descriptor & 0x20) !== 0;
  const dictionaryIdBytes = [0, 1, 2, 4][descriptor & 0x03] ?? 0;
  const contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][contentSizeFlag] ?? 0;
  const contentSizeOffset = 5 + (singleSegment ? 0 : 1) + dictionaryIdBytes;
  const blocksOffset = contentSizeOffset + contentSizeBytes;
  if (buf.byteLength < blocksOffset) return undefined;
  const header: FrameHeader = { blocksOffset, hasChecksum: (descriptor & 0x04) !== 0 };
  if (contentSizeBytes === 0) return header;
  const view = new DataView(buf.buffer, buf.byteOffset + contentSizeOffset, contentSizeBytes);
  return { ...header, contentSize: littleEndianSize(view) };
}

function littleEndianSize(field: DataView): number {
  switch (field.byteLength) {
    case 1:
      return field.getUint8(0);
    case 2:
      // The 2-byte field stores the size less 256 (RFC 8878 3.1.1.1.4).
      return field.getUint16(0, true) + 256;
    case 4:
      return field.getUint32(0, true);
    default:
      return Number(field.getBigUint64(0, true));
  }
}

/** Byte offset just past the frame that starts `buf`, following RFC 8878 section 3.1.1. */
function frameEnd(buf: Uint8Array): number | undefined {
  const header = frameHeader(buf);
  if (!header) return undefined;
  let offset = header.blocksOffset;
  for (;;) {
    const b0 = buf[offset];
    const b1 = buf[offset + 1];
    const b2 = buf[offset + 2];
    if (b0 === undefined || b1 === undefined || b2 === undefined) return undefined;
    const blockHeader = b0 | (b1 << 8) | (b2 << 16);
    const last = (blockHeader & 1) === 1;
    const type = (blockHeader >> 1) & 3;
    const size = blockHeader >> 3;
    if (type === 3) return undefined;
    // An RLE block stores its one repeated byte; raw and compressed blocks store `size` bytes.
    offset += 3 + (type === 1 ? 1 : size);
    if (last) break;
  }
  offset += header.hasChecksum ? 4 : 0;
  return offset <= buf.byteLength ? offset : undefined;
}
