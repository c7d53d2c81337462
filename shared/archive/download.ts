import type { Readable, Writable } from "node:stream";
import type { StoredArchiveKind } from "#shared/archive/validate.ts";
import { zstdDecompressInto } from "#shared/archive/zstd-decoder-thread.ts";
import { UnknownDownloadFormatError } from "#shared/archive/errors.ts";

export const downloadFormats = ["tar.zst", "tar"] as const;

export type DownloadFormat = (typeof downloadFormats)[number];

export function parseDownloadFormat(value: string | undefined): DownloadFormat | undefined {
  if (value === undefined) return undefined;
  const format = downloadFormats.find((allowed) => allowed === value);
  if (format === undefined) {
    throw new UnknownDownloadFormatError(`format: expected one of ${downloadFormats.join(", ")}, got '${value}'`);
  }
  return format;
}

export interface Download {
  contentType: string;
  filename: string;
  /** Set when the stored bytes must be converted on their way out: writes them, converted, into the response. */
  convert?: (stored: Readable, response: Writable) => Promise<void>;
}

/** A legacy JSON profile has no tar inside, so it is served as JSON whatever the format asks. */
export function openDownload(
  stored: { kind: StoredArchiveKind },
  format: DownloadFormat | undefined,
  profileName: string,
): Download {
  if (stored.kind === "json") return { contentType: "application/json", filename: `${profileName}.json` };
  if (format === "tar") {
    return { contentType: "application/x-tar", filename: `${profileName}.tar`, convert: zstdDecompressInto };
  }
  return { contentType: "application/zstd", filename: `${profileName}.tar.zst` };
}
