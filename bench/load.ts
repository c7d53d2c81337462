export interface LoadOptions {
  /** Workers, each calling the operation back to back. */
  concurrency: number;
  durationMs: number;
}

export interface LoadResult {
  /** One entry per successful call. */
  latenciesMs: number[];
  /** From the start until the last worker's final call returned, so a little over the duration. */
  elapsedMs: number;
  failures: number;
  /** Distinct failure messages and how often each occurred. */
  failureMessages: Map<string, number>;
}

/** The report lines naming each run that had failed calls, and why; none when every call succeeded. */
export function failureLines(runs: readonly { label: string; result: LoadResult }[]): string[] {
  const failed = runs.filter(({ result }) => result.failures > 0);
  if (!failed.length) return [];
  const lines = ["", "FAILURES:"];
  for (const { label, result } of failed) {
    lines.push(`- ${label}: ${result.failures} failed`);
    for (const [message, count] of result.failureMessages) lines.push(`    ${count} x ${message}`);
  }
  return lines;
}

/** Beyond this many distinct messages the rest are counted together, so a failing run stays small. */
const maxDistinctFailureMessages = 20;
const otherFailures = "(other failure messages)";

/**
 * Runs `operation` from `concurrency` workers, each starting its next call as soon as the last one
 * settles, until `durationMs` has passed. A call that throws is a failure and adds no latency.
 */
export async function runLoad(options: LoadOptions, operation: (worker: number) => Promise<void>): Promise<LoadResult> {
  const result: LoadResult = { latenciesMs: [], elapsedMs: 0, failures: 0, failureMessages: new Map() };
  const started = performance.now();
  const deadline = started + options.durationMs;

  function recordFailure(error: unknown) {
    result.failures++;
    const message = error instanceof Error ? error.message : String(error);
    const key =
      result.failureMessages.has(message) || result.failureMessages.size < maxDistinctFailureMessages ? message : otherFailures;
    result.failureMessages.set(key, (result.failureMessages.get(key) ?? 0) + 1);
  }

  async function work(worker: number) {
    while (performance.now() < deadline) {
      const callStarted = performance.now();
      try {
        await operation(worker);
        result.latenciesMs.push(performance.now() - callStarted);
      } catch (error) {
        recordFailure(error);
      }
    }
  }

  await Promise.all(Array.from({ length: options.concurrency }, (_, worker) => work(worker)));
  result.elapsedMs = performance.now() - started;
  return result;
}

/** Several runs of one operation as one: their calls pooled, their durations added. */
export function combinedRuns(runs: readonly LoadResult[]): LoadResult {
  const combined: LoadResult = { latenciesMs: [], elapsedMs: 0, failures: 0, failureMessages: new Map() };
  for (const run of runs) {
    for (const latency of run.latenciesMs) combined.latenciesMs.push(latency);
    combined.elapsedMs += run.elapsedMs;
    combined.failures += run.failures;
    for (const [message, count] of run.failureMessages) combined.failureMessages.set(message, (combined.failureMessages.get(message) ?? 0) + count);
  }
  return combined;
}

/** Hands out `values` in turn, forever. */
export function roundRobin<T>(values: readonly T[]): () => T {
  if (values.length === 0) throw new Error("nothing to take turns over");
  let next = 0;
  return () => values[next++ % values.length] as T;
}
