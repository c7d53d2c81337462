import { isServerError, isThrottlingError, isTransientError } from "@smithy/core/retry";
import type { MiddlewareStack, SdkError } from "@smithy/types";
import { serviceTimeouts } from "../aws-timeouts.ts";
import type { Config } from "../config.ts";
import { dependencyOutageMessage, ServiceUnavailableError } from "../domain/errors.ts";
import { errorFields, log } from "../log.ts";

/**
 * What every SDK client of the service is built with: the configured region and, when the
 * configuration names a stand-in, its endpoint. Credentials, retries (standard mode, with their
 * quota and clock-skew correction) and endpoint resolution (partitions, FIPS, dual-stack,
 * `AWS_ENDPOINT_URL_*`) are the SDK's defaults everywhere, stand-ins included.
 */
export function sdkClientSettings(config: Config, endpoint: string | undefined) {
  return {
    region: config.AWS_REGION,
    ...(endpoint === undefined ? {} : { endpoint }),
    requestHandler: serviceTimeouts,
  };
}

/** A service down, throttling or slow, by the classification the SDK's own retry strategy uses. */
function isDependencyOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const sdkError = error as SdkError;
  return isTransientError(sdkError) || isThrottlingError(sdkError) || isServerError(sdkError);
}

/**
 * Turns a call that failed because its service is down, throttling or slow (once the SDK's own
 * retries are spent) into the API's `service_unavailable`, which every caller (a route, an events
 * stream, a workflow task) reports as a failure the client may retry. The AWS error itself, with
 * its request ids and fault, goes to the log here, where the service and operation are known.
 */
export function outagesAsServiceUnavailable<Input extends object, Output extends object>(client: { middlewareStack: MiddlewareStack<Input, Output> }): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (!isDependencyOutage(error)) throw error;
        log.warn("AWS call failed: service unavailable", { service: context.clientName, operation: context.commandName, error: errorFields(error) });
        throw new ServiceUnavailableError(dependencyOutageMessage, { cause: error });
      }
    },
    { step: "initialize", name: "outagesAsServiceUnavailable" },
  );
}
