import { createHash, randomBytes } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { expect, it } from "vitest";
import { pack } from "tar-stream";
import { zstdCompressStream } from "#shared/archive/zstd.ts";
import { zstdDecompressInto } from "#shared/archive/zstd-decoder-thread.ts";

const mebibyte = 1024 * 1024;

/**
 * 32 MiB of noise and 128 MiB of text: about 35 MB compressed. A decoder that buffered its output
 * would grow by 160 MiB, so the 100 MB bound below tells streaming from buffering.
 */
function* blobChunks(): Generator<Buffer> {
  const text = Buffer.alloc(mebibyte, "cookie=value; path=/; domain=example.com\n");
  for (let i = 0; i < 160; i++) yield i % 5 === 0 ? randomBytes(mebibyte) : text;
}

async function compressedTar(): Promise<{ compressed: Buffer; sha256: string }> {
  const archive = pack();
  const entry = archive.entry({ name: "blob.bin", size: 160 * mebibyte });
  archive.finalize();
  const hash = createHash("sha256");
  const chunks: Buffer[] = [];
  await Promise.all([
    pipeline(Readable.from(blobChunks()), entry),
    pipeline(
      archive as AsyncIterable<Buffer>,
      async function* (tar: AsyncIterable<Buffer>) {
        for await (const chunk of tar) {
          hash.update(chunk);
          yield chunk;
        }
      },
      zstdCompressStream(),
      async (compressed: AsyncIterable<Buffer>) => {
        for await (const chunk of compressed) chunks.push(chunk);
      },
    ),
  ]);
  return { compressed: Buffer.concat(chunks), sha256: hash.digest("hex") };
}

function* slices(buf: Buffer, size: number): Generator<Buffer> {
  for (let offset = 0; offset < buf.length; offset += size) yield buf.subarray(offset, offset + size);
}

it("decompresses a large tar.zst into a response with bounded memory", async () => {
  // Prepare
  const { compressed, sha256 } = await compressedTar();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  let bytes = 0;
  const hash = createHash("sha256");

  // Act
  const tar = new Writable({
    write(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      peak = Math.max(peak, process.memoryUsage.rss());
      done();
    },
  });
  await zstdDecompressInto(Readable.from(slices(compressed, 64 * 1024)), tar);

  // Assess
  expect(bytes).toBeGreaterThan(160 * mebibyte);
  expect(hash.digest("hex")).toBe(sha256);
  expect(peak - baseline).toBeLessThan(100 * 1000 * 1000);
});
