import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from "#shared/domain/errors.ts";

/** The uploaded bytes are not a profile archive we can store; the message says what is wrong. */
export class InvalidArchiveError extends BadRequestError {
  constructor(message: string) {
    super(message);
    this.name = "InvalidArchiveError";
  }
}

/**
 * A 415, as on the JSON routes: the body was sent as a type the upload does not take (the message
 * lists those it does). A body of an accepted type that cannot be used is an InvalidArchiveError.
 */
export class UnsupportedArchiveTypeError extends UnsupportedMediaTypeError {
  constructor(contentType: string | undefined, accepted: readonly string[]) {
    const problem = contentType ? `unsupported content type '${contentType}'` : "missing content type";
    super(`${problem}: send one of ${accepted.join(", ")}`);
    this.name = "UnsupportedArchiveTypeError";
  }
}

/**
 * A 413: the archive decompresses past `limitBytes`. Small compressed bytes can expand to gigabytes,
 * so the upload limit alone does not bound what reading an archive costs.
 */
export class ArchiveTooLargeError extends PayloadTooLargeError {
  constructor(limitBytes: number) {
    super(limitBytes, `the archive is larger than the ${limitBytes} byte limit once decompressed`);
    this.name = "ArchiveTooLargeError";
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
