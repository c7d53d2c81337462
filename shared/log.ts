type Level = "debug" | "info" | "warn" | "error";

const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

let configuredThreshold: number | undefined;

/** Read once: a process.env lookup is a call into the runtime, and every request logs at debug. */
function threshold(): number {
  configuredThreshold ??= order[(process.env.LOG_LEVEL as Level | undefined) ?? "info"] ?? order.info;
  return configuredThreshold;
}

/**
 * One JSON object per line, so CloudWatch Logs Insights can query fields. Callers pass ids and
 * outcomes only: request bodies and headers are never logged, so no secret reaches a log.
 */
function write(level: Level, message: string, fields: Record<string, unknown>): void {
  if (order[level] < threshold()) return;
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
}

/** What an AWS SDK error adds to an Error: whose fault it was, and the request's ids. */
interface AwsErrorParts {
  $fault?: "client" | "server";
  $metadata?: { requestId?: string; extendedRequestId?: string; httpStatusCode?: number; attempts?: number };
  code?: string;
}

/**
 * A failure's log fields: an AWS error's request ids and fault besides its name and message, so a
 * report can be matched with AWS's records and a support case (S3 asks for the extended id).
 */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { value: String(error) };
  const { $fault, $metadata, code } = error as Error & AwsErrorParts;
  return {
    name: error.name,
    message: error.message,
    ...(code === undefined ? {} : { code }),
    ...($fault === undefined ? {} : { fault: $fault }),
    ...($metadata === undefined
      ? {}
      : { awsRequestId: $metadata.requestId, awsExtendedRequestId: $metadata.extendedRequestId, httpStatus: $metadata.httpStatusCode, attempts: $metadata.attempts }),
    stack: error.stack,
  };
}

export const log = {
  debug: (message: string, fields: Record<string, unknown> = {}) => write("debug", message, fields),
  info: (message: string, fields: Record<string, unknown> = {}) => write("info", message, fields),
  warn: (message: string, fields: Record<string, unknown> = {}) => write("warn", message, fields),
  error: (message: string, fields: Record<string, unknown> = {}) => write("error", message, fields),
};

/** The namespace of the service's own metrics; the dashboard (infra/constructs/observability.ts) reads it. */
export const metricNamespace = "AuthConnectionService";

/**
 * One count as a CloudWatch embedded-metric log line: Lambda's log pipeline turns it into a metric
 * with no API call, and locally it is just a log line. `fields` ride along for Logs Insights.
 */
export function countMetric(name: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(
    `${JSON.stringify({
      _aws: { Timestamp: Date.now(), CloudWatchMetrics: [{ Namespace: metricNamespace, Dimensions: [[]], Metrics: [{ Name: name, Unit: "Count" }] }] },
      [name]: 1,
      ...fields,
    })}\n`,
  );
}
