import type { AppContext } from '../context.js';
import { writeRollups } from '../storage/postgres/rollups-repository.js';

const HOUR = 3_600_000;

/**
 * The rollups job: recomputes the hourly rollups of the last `hours` hours. Idempotent, so
 * a retried or overlapping run writes the same rows.
 */
export async function computeRollups(ctx: AppContext, hours = 3): Promise<number> {
  const now = ctx.clock.now();
  const from = new Date(Math.floor(now.getTime() / HOUR) * HOUR - (hours - 1) * HOUR);
  return writeRollups(ctx.db, from, now);
}
