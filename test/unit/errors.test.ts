import { describe, expect, it } from "vitest";
import { ArchiveTooLargeError, InvalidArchiveError, UnknownDownloadFormatError, UnsupportedArchiveTypeError } from "#shared/archive/errors.ts";
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  HandoffTokenExpiredError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from "#shared/domain/errors.ts";
import { AppError } from "#shared/errors.ts";
import { errorResponse } from "#shared/http/responses.ts";
import { gcmOpen, gcmSeal, SecretOpenError } from "#shared/secrets/aes-gcm.ts";

const cause = new Error("the underlying failure");

/** Each error class of the API, built with `cause`, with the name, code and HTTP status it answers with. */
const errors: Array<[AppError, string, string, number]> = [
  [new BadRequestError("bad", undefined, { cause }), "BadRequestError", "bad_request", 400],
  [new UnauthorizedError(undefined, { cause }), "UnauthorizedError", "unauthorized", 401],
  [new HandoffTokenExpiredError({ cause }), "HandoffTokenExpiredError", "unauthorized", 401],
  [new ForbiddenError("no", { cause }), "ForbiddenError", "forbidden", 403],
  [new NotFoundError("none", { cause }), "NotFoundError", "not_found", 404],
  [new ConflictError("taken", "ac_1", { cause }), "ConflictError", "conflict", 409],
  [new PayloadTooLargeError(10, undefined, { cause }), "PayloadTooLargeError", "payload_too_large", 413],
  [new UnsupportedMediaTypeError("text", { cause }), "UnsupportedMediaTypeError", "unsupported_media_type", 415],
  [new TooManyRequestsError("too_many_streams", "slow down", 7, { cause }), "TooManyRequestsError", "too_many_streams", 429],
  [new ServiceUnavailableError("down", { cause }), "ServiceUnavailableError", "service_unavailable", 503],
  [new InvalidArchiveError("not a tar", { cause }), "InvalidArchiveError", "bad_request", 400],
  [new UnknownDownloadFormatError("format: zip", { cause }), "UnknownDownloadFormatError", "bad_request", 400],
  [new UnsupportedArchiveTypeError("text/plain", ["application/zstd"], { cause }), "UnsupportedArchiveTypeError", "unsupported_media_type", 415],
  [new ArchiveTooLargeError(10, { cause }), "ArchiveTooLargeError", "payload_too_large", 413],
];

describe("the API's errors", () => {
  it.each(errors)("%o is named after its class, keeps its cause and carries no status of its own", (error, name) => {
    expect(error.name).toBe(name);
    expect(error.cause).toBe(cause);
    expect(error).not.toHaveProperty("status");
  });

  it.each(errors)("%o answers with its code and the status the one table gives it", (error, _name, code, status) => {
    const answer = errorResponse(error, "req-1");

    expect(answer.statusCode).toBe(status);
    expect(JSON.parse(answer.body)).toMatchObject({ code, message: error.message });
  });

  it("sets no cause when none is given", () => {
    expect(Object.hasOwn(new NotFoundError("none"), "cause")).toBe(false);
  });

  it("masks anything else as a 500 that names only the request id", () => {
    const answer = errorResponse(new Error("secret detail"), "req-2");

    expect(answer.statusCode).toBe(500);
    expect(JSON.parse(answer.body)).toEqual({ code: "internal_error", message: "internal error; quote request id req-2 when reporting it" });
  });

  it("a sealed secret that does not open is named, and keeps the decipher's error as its cause", () => {
    const key = Buffer.alloc(32, 1);
    const { iv, ciphertext } = gcmSeal(key, "plaintext", { org: "acme" });

    const failure = (() => {
      try {
        return gcmOpen(key, iv, ciphertext, { org: "other" });
      } catch (error) {
        return error;
      }
    })();

    expect(failure).toBeInstanceOf(SecretOpenError);
    expect((failure as Error).name).toBe("SecretOpenError");
    expect((failure as Error).cause).toBeInstanceOf(Error);
  });
});
