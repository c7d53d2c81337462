/** Latency and throughput of one measured load run. */
export interface LatencySummary {
  count: number;
  perSecond: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * Nearest-rank percentile: the smallest of the ascending values with at least `p` percent of all
 * values at or below it. NaN when there are no values.
 */
export function percentile(ascending: ArrayLike<number>, p: number): number {
  if (ascending.length === 0) return Number.NaN;
  const rank = Math.min(ascending.length, Math.max(1, Math.ceil((p / 100) * ascending.length)));
  return ascending[rank - 1] ?? Number.NaN;
}

export function summarize(latenciesMs: readonly number[], elapsedMs: number): LatencySummary {
  // A typed array sorts numerically, and faster than a plain array with a comparator.
  const ascending = Float64Array.from(latenciesMs).sort();
  const total = ascending.reduce((sum, value) => sum + value, 0);
  return {
    count: ascending.length,
    perSecond: elapsedMs > 0 ? (ascending.length * 1000) / elapsedMs : Number.NaN,
    meanMs: ascending.length ? total / ascending.length : Number.NaN,
    p50Ms: percentile(ascending, 50),
    p90Ms: percentile(ascending, 90),
    p99Ms: percentile(ascending, 99),
    maxMs: ascending.length ? (ascending[ascending.length - 1] ?? Number.NaN) : Number.NaN,
  };
}
