/**
 * How long an AWS call may wait for a service's answer, for every SDK client of the service and of
 * the router. The SDK waits without limit by default, and a hung connection would then use up a
 * function's whole 29 s, or hold the router's lookups; with these, the SDK's attempts (three, four
 * for DynamoDB) and their backoff still end inside that. A streamed body (an S3 download) is not
 * bounded by them.
 */
export const serviceTimeouts = { connectionTimeout: 2_000, requestTimeout: 5_000, throwOnRequestTimeout: true };
