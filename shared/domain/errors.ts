import { AppError, type ErrorDetail, type TooManyRequestsCode } from "../errors.ts";

/**
 * The domain's errors: a code and a message, no HTTP status (the HTTP side maps codes to statuses,
 * shared/http/error-statuses.ts). Each takes the error it wraps as `cause`.
 */

export class BadRequestError extends AppError {
  constructor(message: string, details?: ErrorDetail[], options?: ErrorOptions) {
    super("bad_request", message, { details, ...options });
    this.name = "BadRequestError";
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = "missing or unknown API key: send 'Authorization: Bearer <api key>'", options?: ErrorOptions) {
    super("unauthorized", message, options);
    this.name = "UnauthorizedError";
  }
}

export class HandoffTokenExpiredError extends UnauthorizedError {
  constructor(options?: ErrorOptions) {
    super("handoff token expired: exchange a new handoff code", options);
    this.name = "HandoffTokenExpiredError";
  }
}

/** The caller is known but its credential does not reach this route or resource. */
export class ForbiddenError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super("forbidden", message, options);
    this.name = "ForbiddenError";
  }
}

export class NotFoundError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super("not_found", message, options);
    this.name = "NotFoundError";
  }
}

export class ConflictError extends AppError {
  constructor(message: string, existingId?: string, options?: ErrorOptions) {
    super("conflict", message, {
      details: existingId ? [{ code: "existing_id", message: existingId }] : undefined,
      extra: existingId ? { existing_id: existingId } : undefined,
      ...options,
    });
    this.name = "ConflictError";
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number, message = `request body is larger than the ${limitBytes} byte limit`, options?: ErrorOptions) {
    super("payload_too_large", message, options);
    this.name = "PayloadTooLargeError";
  }
}

/** A limit the caller ran into, with the seconds the answer's `Retry-After` names. */
export class TooManyRequestsError extends AppError {
  readonly retryAfterSeconds: number;

  constructor(code: TooManyRequestsCode, message: string, retryAfterSeconds: number, options?: ErrorOptions) {
    super(code, message, options);
    this.name = "TooManyRequestsError";
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super("unsupported_media_type", message, options);
    this.name = "UnsupportedMediaTypeError";
  }
}

/** What a client is told when a service this one depends on (DynamoDB, S3, Step Functions, KMS) is down, throttling or slow. */
export const dependencyOutageMessage = "a service this API depends on is unavailable or slow; retry the request";

export class ServiceUnavailableError extends AppError {
  constructor(message: string, options?: ErrorOptions) {
    super("service_unavailable", message, options);
    this.name = "ServiceUnavailableError";
  }
}
