import { isServerError, isThrottlingError, isTransientError } from "@smithy/core/retry";
import type { SdkError } from "@smithy/types";
import { ServiceUnavailableError } from "../domain/errors.ts";

/**
 * Whether a failure is a dependency's (DynamoDB, S3, Step Functions, KMS) being down, throttling or
 * slow, by the same classification the SDK's retry strategy uses to decide what to retry; when it
 * reaches here, the SDK's retries did not get through either.
 */
export function isDependencyOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const sdkError = error as SdkError;
  return isTransientError(sdkError) || isThrottlingError(sdkError) || isServerError(sdkError);
}

export const dependencyOutageMessage = "a service this API depends on is unavailable or slow; retry the request";

/** What the client is told instead: the request changed nothing it can see, and may be retried. */
export function dependencyOutage(): ServiceUnavailableError {
  return new ServiceUnavailableError(dependencyOutageMessage);
}

/**
 * A failure's log fields: an AWS error's request id and fault (whose side it was) besides its name
 * and message, so a report can be matched with the service's own logs and support cases.
 */
export function describeFailure(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { value: String(error) };
  const { $fault, $metadata, code } = error as Partial<SdkError> & { code?: string };
  return {
    name: error.name,
    message: error.message,
    ...(code === undefined ? {} : { code }),
    ...($fault === undefined ? {} : { fault: $fault }),
    ...($metadata === undefined ? {} : { awsRequestId: $metadata.requestId, httpStatus: $metadata.httpStatusCode, attempts: $metadata.attempts }),
    stack: error.stack,
  };
}
