import type { Readable, Writable } from "node:stream";
import { TooManyRequestsError } from "../domain/errors.ts";
import { AppError, errorBody } from "../errors.ts";
import { errorStatus } from "./error-statuses.ts";

export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes a body into the response stream and ends it; on failure it destroys the stream and
 * rejects. For bodies that write from reused buffers, which a Readable could not hand over safely.
 */
export type BodyWriter = (response: Writable) => Promise<void>;

/** An answer whose body is streamed to the client as it is produced. */
export interface StreamingResponse {
  statusCode: number;
  headers: Record<string, string>;
  stream: Readable | BodyWriter;
}

const jsonType = { "content-type": "application/json" };

export function json(statusCode: number, value: unknown, headers: Record<string, string> = {}): HttpResponse {
  return { statusCode, headers: { ...jsonType, ...headers }, body: JSON.stringify(value) };
}

export const ok = (value: unknown) => json(200, value);
export const created = (value: unknown) => json(201, value);
export const noContent = (): HttpResponse => ({ statusCode: 204, headers: {}, body: "" });

/** A list page: a bare array and the two headers the official client pages by. */
export function page(items: unknown[], hasMore: boolean, offset: number, limit: number): HttpResponse {
  return json(200, items, { "x-has-more": String(hasMore), "x-next-offset": String(hasMore ? offset + limit : 0) });
}

/** The one mapping from a failure to an answer; anything unexpected is masked as a 500. */
export function errorResponse(error: unknown, requestId: string): HttpResponse {
  const body = errorBody(error, requestId);
  if (!(error instanceof AppError)) return json(500, body);
  const status = errorStatus(error);
  const retryable = status === 408 || status === 429 || status >= 500;
  const retryAfter = error instanceof TooManyRequestsError ? String(error.retryAfterSeconds) : "1";
  const headers: Record<string, string> = retryable ? { "retry-after": retryAfter, "x-should-retry": "true" } : { "x-should-retry": "false" };
  return json(status, body, headers);
}
