type Level = "debug" | "info" | "warn" | "error";

const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function threshold(): number {
  return order[(process.env.LOG_LEVEL as Level | undefined) ?? "info"] ?? order.info;
}

/**
 * One JSON object per line, so CloudWatch Logs Insights can query fields. Callers pass ids and
 * outcomes only: request bodies and headers are never logged, so no secret reaches a log.
 */
function write(level: Level, message: string, fields: Record<string, unknown>): void {
  if (order[level] < threshold()) return;
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`);
}

export const log = {
  debug: (message: string, fields: Record<string, unknown> = {}) => write("debug", message, fields),
  info: (message: string, fields: Record<string, unknown> = {}) => write("info", message, fields),
  warn: (message: string, fields: Record<string, unknown> = {}) => write("warn", message, fields),
  error: (message: string, fields: Record<string, unknown> = {}) => write("error", message, fields),
};
