/**
 * The 429 codes: each names the limit the caller ran into. A new limit adds its code here, and the
 * status table (shared/http/error-statuses.ts) then asks for its status.
 */
export type TooManyRequestsCode = "too_many_streams" | "rate_limited";

/**
 * Every code an error answer of the API carries (docs/api.md lists them). Here, in a leaf, so the
 * archive formats and the domain both name them without importing each other; the HTTP status of
 * each is the HTTP side's (shared/http/error-statuses.ts).
 */
export type ErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "payload_too_large"
  | "unsupported_media_type"
  | TooManyRequestsCode
  | "service_unavailable";

export interface ErrorDetail {
  code: string;
  message: string;
}

export interface AppErrorOptions extends ErrorOptions {
  details?: ErrorDetail[];
  /** Fields the error body carries beside `code` and `message` (`existing_id`). */
  extra?: Record<string, string>;
}

/**
 * A failure the caller caused or can act on: its code and message are what the API answers. Every
 * subclass sets `name` by hand, as bundles are minified and a class's own name does not survive.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly extra: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, { details, extra, cause }: AppErrorOptions = {}) {
    // Only a given cause: Error sets `cause` whenever the option is present, undefined included.
    super(message, cause === undefined ? undefined : { cause });
    this.name = "AppError";
    this.code = code;
    this.details = details;
    this.extra = extra;
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
