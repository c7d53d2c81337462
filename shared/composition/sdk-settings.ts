import type { Config } from "../config.ts";

/**
 * How long a call may wait for a service's answer. The SDK waits without limit by default, and a
 * hung connection would then use up a function's whole 29 s; with these, its three attempts and
 * their backoff still end inside that. A streamed body (an S3 download) is not bounded by them.
 */
const serviceTimeouts = { connectionTimeout: 2_000, requestTimeout: 5_000 };

/**
 * What every SDK client of the service is built with: the configured region and, when the
 * configuration names a stand-in, its endpoint. Credentials, retries (standard mode, three
 * attempts, with their quota and clock-skew correction) and endpoint resolution (partitions, FIPS,
 * dual-stack, `AWS_ENDPOINT_URL_*`) are the SDK's defaults everywhere, stand-ins included.
 */
export function sdkClientSettings(config: Config, endpoint: string | undefined, timeouts: Partial<typeof serviceTimeouts> = {}) {
  return {
    region: config.AWS_REGION,
    ...(endpoint === undefined ? {} : { endpoint }),
    requestHandler: { ...serviceTimeouts, ...timeouts, throwOnRequestTimeout: true },
  };
}
