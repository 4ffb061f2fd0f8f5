import type { AppContext } from '../context.js';
import { ALL_CATEGORIES } from '../domain/ids.js';
import { retiredBefore } from '../domain/retention.js';
import { markCacheEvicted, periodCategories, periodsToEvict } from '../storage/postgres/retention-repository.js';
import { unlinkPeriodKeys } from '../storage/redis/period-eviction.js';

/** Periods handled per tick: a backlog (a first deployment, a long outage) drains over several ticks. */
export const EVICTIONS_PER_TICK = 50;

/**
 * The period tick's retention step: removes the Redis keys of closed periods retired by
 * CLOSED_PERIOD_CACHE_HOURS (their reads already come from final results), a bounded number
 * per tick, each in bounded Redis commands, and records each one done. A crash mid-way
 * leaves the period unrecorded, and the next tick removes what is left (UNLINK of a missing
 * key is a no-op).
 */
export async function evictRetiredPeriods(ctx: AppContext, now: Date): Promise<string[]> {
  const due = await periodsToEvict(ctx.db, retiredBefore(now, ctx.env.CLOSED_PERIOD_CACHE_HOURS), EVICTIONS_PER_TICK);
  if (due.length === 0) return [];
  const boards = await ctx.boards.getMany(due.map((d) => d.boardId));
  const evicted: string[] = [];
  for (const period of due) {
    const board = boards.get(period.boardId);
    // The categories the period had (its aggregates) and the board's current ones: a category
    // removed from the board since still left its keys, and one never scored has none to find.
    const categories = [
      ...new Set([
        ALL_CATEGORIES,
        ...(board?.categories ?? []),
        ...(await periodCategories(ctx.db, period.boardId, period.key)),
      ]),
    ];
    const keys = await unlinkPeriodKeys(ctx.leaderboard.redis, ctx.leaderboard.keys, {
      board: period.boardId,
      period: period.key,
      categories,
    });
    await markCacheEvicted(ctx.db, period.boardId, period.key, ctx.clock.now());
    ctx.log.info(
      { board: period.boardId, period: period.key, keys },
      'closed period removed from Redis; reads use its final results',
    );
    evicted.push(`${period.boardId}/${period.key}`);
  }
  return evicted;
}
