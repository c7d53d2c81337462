import { compress as referenceCompress, decompress as referenceDecompress } from "@mongodb-js/zstd";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import * as zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { ArchiveTooLargeError } from "#shared/archive/errors.ts";
import {
  compressZstd,
  declaredContentSize,
  isZstdFrame,
  zstdCompressStream,
  zstdDecompressFrame,
  zstdDecompressStream,
  zstdFrameProblem,
} from "#shared/archive/zstd.ts";
import { aProfileArchiveBomb } from "../../support/archive-builders.ts";

const mebibyte = 1024 * 1024;

const content = Buffer.concat([randomBytes(200_000), Buffer.alloc(300_000, "profile ")]);

async function decompress(compressed: Buffer): Promise<Buffer> {
  const decoder = zstdDecompressStream();
  decoder.end(compressed);
  return buffer(decoder);
}

async function compressStreaming(data: Buffer): Promise<Buffer> {
  const encoder = zstdCompressStream();
  encoder.end(data);
  return buffer(encoder);
}

describe("compressZstd", () => {
  it("makes one zstd frame that the decompress stream restores", async () => {
    // Act
    const compressed = await compressZstd(content);

    // Assess
    expect(isZstdFrame(compressed)).toBe(true);
    expect(zstdFrameProblem(compressed)).toBeUndefined();
    expect((await decompress(compressed)).equals(content)).toBe(true);
  });

  it("accepts a Uint8Array view into a larger buffer", async () => {
    // Prepare
    const view = new Uint8Array(content.buffer, content.byteOffset + 10, 1000);

    // Act
    const compressed = await compressZstd(view);

    // Assess
    expect((await decompress(compressed)).equals(Buffer.from(view))).toBe(true);
  });
});

describe("declaredContentSize", () => {
  // 1-, 2-, 4- and 8-byte size fields (RFC 8878 3.1.1.1.4), the 2-byte one offset by 256.
  it.each([0, 200, 256, 5_000, 65_791, 65_792, 100_000])("reads the %i bytes a whole-buffer frame declares, and the decoder sized to it restores them", async (size) => {
    // Prepare
    const data = Buffer.alloc(size, "session ");

    // Act
    const compressed = await compressZstd(data);
    const declared = declaredContentSize(compressed);
    const decoder = zstdDecompressStream(declared);
    decoder.end(compressed);

    // Assess
    expect(declared).toBe(size);
    expect((await buffer(decoder)).equals(data)).toBe(true);
  });

  it("reads the 8-byte field of a frame over 4 GiB from its header alone", () => {
    // Prepare: magic, descriptor (8-byte size, single segment), then the size
    const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 1, 0, 0, 0]);

    // Act, Assess
    expect(declaredContentSize(header)).toBe(2 ** 32);
  });

  it("is undefined for a streamed frame, which declares none, and for what is not a frame", async () => {
    // Act, Assess
    expect(declaredContentSize(await compressStreaming(content))).toBeUndefined();
    expect(declaredContentSize(Buffer.from("not zstd at all"))).toBeUndefined();
    expect(declaredContentSize(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x60, 0x00]))).toBeUndefined();
  });
});

describe("zstdDecompressFrame", () => {
  it.each([3_000, 300_000])("restores a %i-byte frame held in memory, whether it decodes in one call or streams", async (size) => {
    // Prepare
    const data = Buffer.concat([randomBytes(size / 2), Buffer.alloc(size / 2, "cookie ")]);

    // Act
    const decoded = await buffer(Readable.from(zstdDecompressFrame(await compressZstd(data), size)));

    // Assess
    expect(decoded.equals(data)).toBe(true);
  });

  it("refuses a frame whose content outgrows the size it declares", async () => {
    // Prepare: the 2-byte size field (offset 5) rewritten from 5000 to 1000
    const compressed = await compressZstd(Buffer.alloc(5_000, "session "));
    compressed.writeUInt16LE(1_000 - 256, 5);

    // Act, Assess
    expect(declaredContentSize(compressed)).toBe(1_000);
    expect(() => zstdDecompressFrame(compressed, 5_000)).toThrow();
  });

  it("stops a frame that declares no size once its output passes the cap, having read a small part of it", async () => {
    // Prepare
    const bomb = await aProfileArchiveBomb(512 * mebibyte);
    const cap = 4 * mebibyte;
    let outputBytes = 0;

    // Act
    const decoder = zstdDecompressFrame(bomb, cap);
    const reading = (async () => {
      for await (const chunk of decoder) outputBytes += chunk.length;
    })();

    // Assess
    await expect(reading).rejects.toThrow(new ArchiveTooLargeError(cap));
    expect(declaredContentSize(bomb)).toBeUndefined();
    expect(decoder).toBeInstanceOf(zlib.ZstdDecompress);
    expect(outputBytes).toBeLessThanOrEqual(cap);
    // The compressed bytes the decoder took in before it stopped: a small part of the frame.
    expect((decoder as zlib.ZstdDecompress).bytesWritten).toBeLessThan(bomb.length / 8);
  });

  it("refuses a frame that declares a size past the cap without decoding it", async () => {
    // Prepare
    const compressed = await compressZstd(Buffer.alloc(2 * mebibyte));

    // Act, Assess
    expect(() => zstdDecompressFrame(compressed, mebibyte)).toThrow(new ArchiveTooLargeError(mebibyte));
  });
});

describe("interoperability with the reference libzstd binding (@mongodb-js/zstd)", () => {
  it("decodes what the reference compresses, as an upload made by other tools would be", async () => {
    // Act
    const compressed = await referenceCompress(content, 19);

    // Assess
    expect(zstdFrameProblem(compressed)).toBeUndefined();
    expect((await decompress(compressed)).equals(content)).toBe(true);
  });

  it("writes frames the reference decodes, as a downloaded archive will be", async () => {
    // Act
    const restored = await referenceDecompress(await compressStreaming(content));

    // Assess
    expect(restored.equals(content)).toBe(true);
  });
});

describe("zstdCompressStream", () => {
  it("makes one zstd frame that the decompress stream restores", async () => {
    // Act
    const compressed = await compressStreaming(content);

    // Assess
    expect(zstdFrameProblem(compressed)).toBeUndefined();
    expect((await decompress(compressed)).equals(content)).toBe(true);
  });
});

describe("isZstdFrame", () => {
  it.each([
    ["a zstd magic number", [0x28, 0xb5, 0x2f, 0xfd, 0x00], true],
    ["a cut-off magic number", [0x28, 0xb5, 0x2f], false],
    ["JSON", [0x7b, 0x7d], false],
  ])("%s is a zstd frame: %s", (_, bytes, expected) => {
    // Act
    const result = isZstdFrame(Buffer.from(bytes));

    // Assess
    expect(result).toBe(expected);
  });
});

describe("zstdFrameProblem", () => {
  it("reports bytes that are not zstd", () => {
    // Act
    const problem = zstdFrameProblem(Buffer.from("not zstd at all"));

    // Assess
    expect(problem).toBe("it does not start with the zstd magic number");
  });

  it("reports a truncated frame, which the decoder itself lets pass", async () => {
    // Prepare
    const compressed = await compressStreaming(content);

    // Act
    const problems = [1, 4, 1000, compressed.length - 6].map((cut) =>
      zstdFrameProblem(compressed.subarray(0, compressed.length - cut)),
    );

    // Assess
    expect(problems).toEqual(Array(4).fill("the zstd frame is truncated or malformed"));
  });

  it("reports a second frame, which the decoder would drop", async () => {
    // Prepare
    const first = await compressZstd(Buffer.from("first"));
    const second = await compressZstd(Buffer.from("second"));

    // Act
    const problem = zstdFrameProblem(Buffer.concat([first, second]));

    // Assess
    expect(problem).toBe(`${second.length} bytes follow the zstd frame; send a single-frame archive`);
  });
});
