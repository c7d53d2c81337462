import { AppError } from "#shared/errors.ts";

/**
 * The archive formats' own errors: they import nothing from the domain, and answer by their codes as
 * the domain's errors do (a 400, a 415, a 413: shared/http/error-statuses.ts).
 */

/** The uploaded bytes are not a profile archive we can store; the message says what is wrong. */
export class InvalidArchiveError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super("bad_request", message, options);
    this.name = "InvalidArchiveError";
  }
}

/**
 * As on the JSON routes: the body was sent as a type the upload does not take (the message lists
 * those it does). A body of an accepted type that cannot be used is an InvalidArchiveError.
 */
export class UnsupportedArchiveTypeError extends AppError {
  constructor(contentType: string | undefined, accepted: readonly string[], options?: ErrorOptions) {
    const problem = contentType ? `unsupported content type '${contentType}'` : "missing content type";
    super("unsupported_media_type", `${problem}: send one of ${accepted.join(", ")}`, options);
    this.name = "UnsupportedArchiveTypeError";
  }
}

/**
 * The archive decompresses past `limitBytes`. Small compressed bytes can expand to gigabytes, so the
 * upload limit alone does not bound what reading an archive costs.
 */
export class ArchiveTooLargeError extends AppError {
  constructor(limitBytes: number, options?: ErrorOptions) {
    super("payload_too_large", `the archive is larger than the ${limitBytes} byte limit once decompressed`, options);
    this.name = "ArchiveTooLargeError";
  }
}

/** A download asked for in a format the archives are not served in; the message names those they are. */
export class UnknownDownloadFormatError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super("bad_request", message, options);
    this.name = "UnknownDownloadFormatError";
  }
}

/**
 * For a `catch` of reading a saved session: one past the cap (stored before imports were capped)
 * counts as none, which a new login replaces; any other error is rethrown.
 */
export function noSessionIfTooLarge(error: unknown): undefined {
  if (error instanceof ArchiveTooLargeError) return undefined;
  throw error;
}
