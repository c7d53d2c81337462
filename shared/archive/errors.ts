import { BadRequestError } from "#shared/domain/errors.ts";

/** The uploaded bytes are not a profile archive we can store; the message says what is wrong. */
export class InvalidArchiveError extends BadRequestError {
  constructor(message: string) {
    super(message);
    this.name = "InvalidArchiveError";
  }
}

/**
 * A 400 rather than the 415 the JSON routes use: archive uploads answer every unusable body the
 * same way, as the profiles issue specifies, and the message lists what is accepted.
 */
export class UnsupportedArchiveTypeError extends BadRequestError {
  constructor(contentType: string | undefined, accepted: readonly string[]) {
    const problem = contentType ? `unsupported content type '${contentType}'` : "missing content type";
    super(`${problem}: send one of ${accepted.join(", ")}`);
    this.name = "UnsupportedArchiveTypeError";
  }
}
