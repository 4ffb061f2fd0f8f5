/**
 * Event-to-visible lag kept as a histogram (bucket -> count), so that an hour of any number of
 * events costs a few hundred counters and percentiles stay exact to two significant figures:
 * a lag of 0-99 ms is its own bucket, a longer one is rounded to two significant figures
 * (1234 ms -> 1200, 56,789 ms -> 57,000).
 */
export function lagBucket(ms: number): number {
  const whole = Math.max(0, Math.round(ms));
  if (whole < 100) return whole;
  const step = 10 ** (Math.floor(Math.log10(whole)) - 1);
  return Math.round(whole / step) * step;
}

/** Counts per bucket of a list of lags, in milliseconds. */
export function lagCounts(lags: readonly number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const ms of lags) {
    const bucket = lagBucket(ms);
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1);
  }
  return counts;
}

/**
 * The nearest-rank percentile `p` (0 < p <= 1) of a histogram: the smallest bucket holding at
 * least `ceil(p * n)` of its `n` lags. Null for an empty histogram.
 */
export function histogramPercentile(counts: ReadonlyMap<number, number>, p: number): number | null {
  const buckets = [...counts.entries()].filter(([, n]) => n > 0).sort(([a], [b]) => a - b);
  const total = buckets.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const [bucket, n] of buckets) {
    seen += n;
    if (seen >= rank) return bucket;
  }
  return buckets[buckets.length - 1]![0];
}

const HOUR_MS = 3_600_000;

/** Epoch ms of the start of the UTC hour holding `at`: the hour of a rollup row. */
export function startOfHour(at: Date): number {
  return Math.floor(at.getTime() / HOUR_MS) * HOUR_MS;
}
