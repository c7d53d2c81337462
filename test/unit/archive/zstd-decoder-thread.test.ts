import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Readable, Writable } from "node:stream";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { zstdDecompressInto } from "#shared/archive/zstd-decoder-thread.ts";
import { compressZstd, zstdCompressStream } from "#shared/archive/zstd.ts";
import { bundleThreadWorkers, esbuildOptions } from "../../../infra/constructs/bundling.ts";

const mebibyte = 1024 * 1024;

/** 3 MiB of noise and 17 MiB of text: more than the decoder's outputs in flight hold. */
const content = Buffer.concat([randomBytes(3 * mebibyte), Buffer.alloc(17 * mebibyte, "cookie=value; path=/\n")]);

function pieces(buf: Buffer, size: number): Buffer[] {
  return Array.from({ length: Math.ceil(buf.length / size) }, (_, index) => buf.subarray(index * size, (index + 1) * size));
}

/**
 * Keeps a copy of each chunk taken when it calls back, `delayMs` after the write: a chunk whose
 * memory went away before its callback would show up as missing bytes.
 */
function collectingSink(delayMs = 0): Writable & { collected(): Buffer } {
  const copies: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const keep = () => {
        copies.push(Buffer.from(chunk));
        done();
      };
      if (delayMs > 0) setTimeout(keep, delayMs);
      else keep();
    },
  });
  return Object.assign(sink, { collected: () => Buffer.concat(copies) });
}

async function compressedInStreamingFrames(data: Buffer): Promise<Buffer> {
  const encoder = zstdCompressStream();
  encoder.end(data);
  return Buffer.concat(await encoder.toArray());
}

describe("zstdDecompressInto", () => {
  it("restores content whose compressed bytes arrive in small pieces", async () => {
    // Prepare
    const compressed = await compressZstd(content);
    const sink = collectingSink();

    // Act
    await zstdDecompressInto(Readable.from(pieces(compressed, 1000)), sink);

    // Assess
    expect(sink.collected().equals(content)).toBe(true);
    expect(sink.writableFinished).toBe(true);
  });

  it("restores a frame without a declared size, arriving in chunks larger than an input slot", async () => {
    // Prepare
    const compressed = await compressedInStreamingFrames(content);
    const sink = collectingSink();

    // Act
    await zstdDecompressInto(Readable.from([compressed]), sink);

    // Assess
    expect(sink.collected().equals(content)).toBe(true);
  });

  it("leaves each output whole until the sink has called back for it", async () => {
    // Prepare
    const compressed = await compressZstd(content);
    const sink = collectingSink(2);

    // Act
    await zstdDecompressInto(Readable.from(pieces(compressed, 64 * 1024)), sink);

    // Assess
    expect(sink.collected().equals(content)).toBe(true);
  });

  it("ends the sink with nothing written for an empty source", async () => {
    // Prepare
    const sink = collectingSink();

    // Act
    await zstdDecompressInto(Readable.from([]), sink);

    // Assess
    expect(sink.collected().length).toBe(0);
    expect(sink.writableFinished).toBe(true);
  });

  it("fails with the source's error when the source fails midway, destroying the sink", async () => {
    // Prepare
    const compressed = await compressZstd(content);
    const failing = new Readable({ read() {} });
    failing.push(compressed.subarray(0, 1000));
    setImmediate(() => failing.destroy(new Error("the S3 read was cut")));
    const sink = collectingSink();
    sink.on("error", () => undefined);

    // Act
    const decoding = zstdDecompressInto(failing, sink);

    // Assess
    await expect(decoding).rejects.toThrow("the S3 read was cut");
    expect(sink.destroyed).toBe(true);
  });

  it("fails on bytes that are not zstd, naming the decoder's complaint", async () => {
    // Prepare
    const sink = collectingSink();
    sink.on("error", () => undefined);

    // Act
    const decoding = zstdDecompressInto(Readable.from([Buffer.from("this is not a zstd frame at all")]), sink);

    // Assess
    await expect(decoding).rejects.toThrow(/^zstd decoding failed: .+/);
    expect(sink.destroyed).toBe(true);
  });

  it("stops when the sink closes early, as a client that hangs up, and decodes the next download", async () => {
    // Prepare
    const compressed = await compressZstd(content);
    let writes = 0;
    const hangingUp = new Writable({
      write(_chunk, _encoding, done) {
        writes += 1;
        if (writes === 3) hangingUp.destroy();
        done();
      },
    });
    const source = Readable.from(pieces(compressed, 64 * 1024));
    const next = collectingSink();

    // Act
    const decoding = zstdDecompressInto(source, hangingUp);
    await expect(decoding).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
    await zstdDecompressInto(Readable.from([compressed]), next);

    // Assess
    expect(source.destroyed).toBe(true);
    expect(next.collected().equals(content)).toBe(true);
  });

  it("fails when the sink closes after the last write but before it finishes", async () => {
    // Prepare
    const compressed = await compressZstd(content);
    const closingAtEnd: Writable = new Writable({
      write(_chunk, _encoding, done) {
        done();
      },
      final() {
        setImmediate(() => closingAtEnd.destroy());
      },
    });
    const next = collectingSink();

    // Act
    const decoding = zstdDecompressInto(Readable.from([compressed]), closingAtEnd);
    await expect(decoding).rejects.toThrow();
    await zstdDecompressInto(Readable.from([compressed]), next);

    // Assess
    expect(next.collected().equals(content)).toBe(true);
  });

  it("decodes concurrent downloads each into its own sink", async () => {
    // Prepare
    const other = Buffer.alloc(9 * mebibyte, "another profile\n");
    const [first, second] = await Promise.all([compressZstd(content), compressZstd(other)]);
    const firstSink = collectingSink(1);
    const secondSink = collectingSink();

    // Act
    await Promise.all([
      zstdDecompressInto(Readable.from(pieces(first, 64 * 1024)), firstSink),
      zstdDecompressInto(Readable.from(pieces(second, 64 * 1024)), secondSink),
    ]);

    // Assess
    expect(firstSink.collected().equals(content)).toBe(true);
    expect(secondSink.collected().equals(other)).toBe(true);
  });

  it("works from the minified Lambda bundle, with the worker built next to it as the deploy builds it", async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), "decoder-thread-bundle-"));
    try {
      const outfile = join(dir, "decoder.mjs");
      await build({ ...esbuildOptions(), entryPoints: ["shared/archive/zstd-decoder-thread.ts"], outfile, logLevel: "silent" });
      expect(await bundleThreadWorkers(outfile)).toEqual(["zstd-decoder-worker.mjs"]);
      const bundled = (await import(pathToFileURL(outfile).href)) as { zstdDecompressInto: typeof zstdDecompressInto };
      const compressed = await compressZstd(content);
      const sink = collectingSink();

      // Act
      await bundled.zstdDecompressInto(Readable.from(pieces(compressed, 64 * 1024)), sink);

      // Assess
      expect(sink.collected().equals(content)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
