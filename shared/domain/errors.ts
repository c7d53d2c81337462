/** A failure the caller caused or can act on; the HTTP layer maps it to a status and the error body. */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: ErrorDetail[] | undefined;
  readonly extra: Record<string, string> | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { details?: ErrorDetail[]; extra?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.extra = options.extra;
  }
}

export interface ErrorDetail {
  code: string;
  message: string;
}

export class BadRequestError extends AppError {
  constructor(message: string, details?: ErrorDetail[]) {
    super(400, "bad_request", message, { details });
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = "missing or unknown API key: send 'Authorization: Bearer <api key>'") {
    super(401, "unauthorized", message);
  }
}

export class HandoffTokenExpiredError extends UnauthorizedError {
  constructor() {
    super("handoff token expired: exchange a new handoff code");
  }
}

/** The caller is known but its credential does not reach this route or resource. */
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(403, "forbidden", message);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, "not_found", message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, existingId?: string) {
    super(409, "conflict", message, {
      details: existingId ? [{ code: "existing_id", message: existingId }] : undefined,
      extra: existingId ? { existing_id: existingId } : undefined,
    });
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(limitBytes: number, message = `request body is larger than the ${limitBytes} byte limit`) {
    super(413, "payload_too_large", message);
  }
}

/** A 429 with the seconds the answer's `Retry-After` names. */
export class TooManyRequestsError extends AppError {
  readonly retryAfterSeconds: number;

  constructor(code: string, message: string, retryAfterSeconds: number) {
    super(429, code, message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super(415, "unsupported_media_type", message);
  }
}

/** What a client is told when a service this one depends on (DynamoDB, S3, Step Functions, KMS) is down, throttling or slow. */
export const dependencyOutageMessage = "a service this API depends on is unavailable or slow; retry the request";

export class ServiceUnavailableError extends AppError {
  constructor(message: string) {
    super(503, "service_unavailable", message);
  }
}

/**
 * The error body of the API for any failure (an HTTP answer's body, an event stream's `error`
 * frame): an AppError as it is, anything else masked as internal_error.
 */
export function errorBody(error: unknown, requestId: string): { code: string; message: string } & Record<string, unknown> {
  if (!(error instanceof AppError)) {
    return { code: "internal_error", message: `internal error; quote request id ${requestId} when reporting it` };
  }
  const body: { code: string; message: string } & Record<string, unknown> = { code: error.code, message: error.message };
  if (error.details) body.details = error.details;
  return Object.assign(body, error.extra);
}
