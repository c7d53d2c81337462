import { Readable, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { UnknownDownloadFormatError } from "#shared/archive/errors.ts";
import { openDownload, parseDownloadFormat } from "#shared/archive/download.ts";
import { writeProfileTar } from "#shared/archive/tar.ts";
import { compressZstd } from "#shared/archive/zstd.ts";
import { aProfileManifest, aStorageState } from "../../support/archive-builders.ts";

describe("parseDownloadFormat", () => {
  it.each([
    [undefined, undefined],
    ["tar.zst", "tar.zst"],
    ["tar", "tar"],
  ])("reads %s as %s", (value, format) => {
    // Act
    const parsed = parseDownloadFormat(value);

    // Assess
    expect(parsed).toBe(format);
  });

  it.each(["zip", "", "TAR"])("rejects '%s', naming the allowed values", (value) => {
    // Act
    const act = () => parseDownloadFormat(value);

    // Assess
    expect(act).toThrow(UnknownDownloadFormatError);
    expect(act).toThrow(expect.objectContaining({ code: "bad_request" }));
    expect(act).toThrow(`format: expected one of tar.zst, tar, got '${value}'`);
  });
});

describe("openDownload", () => {
  it.each([undefined, "tar.zst" as const])("serves a tar.zst profile as stored when format is %s", (format) => {
    // Act
    const download = openDownload({ kind: "tar.zst" }, format, "work");

    // Assess
    expect(download).toEqual({ contentType: "application/zstd", filename: "work.tar.zst" });
  });

  it("decompresses a tar.zst profile on the way out for format=tar", async () => {
    // Prepare
    const tar = await writeProfileTar({ storageState: aStorageState(), profile: aProfileManifest() });
    const stored = await compressZstd(tar);

    // Act
    const download = openDownload({ kind: "tar.zst" }, "tar", "work");

    // Assess
    expect(download).toMatchObject({ contentType: "application/x-tar", filename: "work.tar" });
    const chunks: Buffer[] = [];
    const response = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(Buffer.from(chunk));
        done();
      },
    });
    await download.convert!(Readable.from([stored]), response);
    expect(Buffer.concat(chunks).equals(tar)).toBe(true);
  });

  it.each([undefined, "tar.zst" as const, "tar" as const])("serves a legacy profile as JSON when format is %s", (format) => {
    // Act
    const download = openDownload({ kind: "json" }, format, "work");

    // Assess
    expect(download).toEqual({ contentType: "application/json", filename: "work.json" });
  });
});
