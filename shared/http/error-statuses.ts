import type { AppError, ErrorCode } from "../errors.ts";

/**
 * The one table from an error's code to the HTTP status it is answered with, whichever room threw
 * it (the domain, the archive formats). Keyed by code, not by class: every code an error may carry
 * is in ErrorCode, the 429 ones included (one per limit), so a code added there without a status
 * here fails the type check.
 */
const errorStatuses = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_streams: 429,
  rate_limited: 429,
  service_unavailable: 503,
} as const satisfies Record<ErrorCode, number>;

export function codeStatus(code: ErrorCode): number {
  return errorStatuses[code];
}

export function errorStatus(error: AppError): number {
  return codeStatus(error.code);
}
