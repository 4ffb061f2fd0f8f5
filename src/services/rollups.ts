import type { AppContext } from '../context.js';
import { histogramPercentile } from '../domain/lag-histogram.js';
import { writeRollupLags, writeRollups } from '../storage/postgres/rollups-repository.js';

const HOUR = 3_600_000;

/**
 * The rollups job: recomputes the hourly rollups of the last `hours` hours, counts from
 * Postgres, then the event-to-visible lag percentiles from the histograms the workers keep
 * in the leaderboard Redis (written in each projection's round trip). An hour whose histogram
 * is gone (the leaderboard Redis lost) keeps the lags last computed. Idempotent, so a retried
 * or overlapping run writes the same rows. Returns the rows written.
 */
export async function computeRollups(ctx: AppContext, hours = 3): Promise<number> {
  const now = ctx.clock.now();
  const from = new Date(Math.floor(now.getTime() / HOUR) * HOUR - (hours - 1) * HOUR);
  const written = await writeRollups(ctx.db, from, now);
  const histograms = await ctx.leaderboard.lagHistograms(written);
  const lags = written.flatMap((hour, i) => {
    const counts = histograms[i];
    const p50 = counts && histogramPercentile(counts, 0.5);
    const p99 = counts && histogramPercentile(counts, 0.99);
    return p50 != null && p99 != null ? [{ ...hour, p50, p99 }] : [];
  });
  await writeRollupLags(ctx.db, lags);
  return written.length;
}
