import { compress as referenceCompress, decompress as referenceDecompress } from "@mongodb-js/zstd";
import { randomBytes } from "node:crypto";
import { buffer } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import {
  compressZstd,
  isZstdFrame,
  zstdCompressStream,
  zstdDecompressStream,
  zstdFrameProblem,
} from "#shared/archive/zstd.ts";

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
