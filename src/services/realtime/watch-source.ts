import type { AppContext } from '../../context.js';
import { isMiss, type Placed, type ScopeRef, type SliceEntry } from '../../storage/redis/leaderboard-cache.js';
import { placeManyInScope, rankScope, type DbScope } from '../../storage/postgres/standings-repository.js';
import { finalPlaceMany, finalSlice } from '../final-standings-source.js';
import { fellBack, type Source } from '../standings-source.js';

export interface WatchedScope {
  source: Source;
  total: number;
  top: SliceEntry[];
  /** Every asked member, ranked or not. */
  placed: Map<string, Placed>;
}

/**
 * The state of one watched scope: one Redis script call for all of a process's streams of
 * the scope. When Redis does not hold the category, or cannot be reached at all, the same
 * answer comes from Postgres in at most two statements (top, the watched members with the total),
 * whatever the number of members, so streams keep showing correct standings.
 */
export async function readWatched(ctx: AppContext, s: ScopeRef, members: readonly string[], topN: number): Promise<WatchedScope> {
  const cached = await ctx.leaderboard.watch(s, members, topN).catch((err: Error) => {
    ctx.log.debug({ err: err.message }, 'stream read from Redis failed; answering from Postgres');
    return null;
  });
  if (cached && !isMiss(cached)) return { source: 'cache', ...cached };
  if (cached) fellBack(ctx, s, cached);
  return { source: 'database', ...(await watchedFromDatabase(ctx, s, members, topN)) };
}

async function watchedFromDatabase(ctx: AppContext, s: ScopeRef, members: readonly string[], topN: number) {
  const scope: DbScope = { period: s.period, category: s.category, region: s.region };
  // One fallback slot for the scope's read, as any other standings read from Postgres.
  return ctx.fallback.run(async (pg) => {
    const top = topN > 0 ? await rankScope(pg, s.board, scope, { offset: 0, limit: topN }) : null;
    const places = await placeManyInScope(pg, s.board, scope, members);
    const total = top?.total ?? places.total;
    const placed = new Map<string, Placed>(members.map((m) => [m, { total, rank: null, scaled: null }]));
    for (const { standing } of places.placed) placed.set(standing.member, { total, rank: standing.rank, scaled: standing.scaled, subscore: standing.subscore });
    return { total, top: top?.entries ?? [], placed };
  });
}

/**
 * A retired period (its Redis keys removed after CLOSED_PERIOD_CACHE_HOURS): its final
 * results in Postgres, in two statements, and never a rebuild into Redis.
 */
export async function readRetired(ctx: AppContext, s: ScopeRef, members: readonly string[], topN: number): Promise<WatchedScope> {
  const top = topN > 0 ? await finalSlice(ctx, s, 0, topN) : null;
  const places =
    members.length > 0
      ? await finalPlaceMany(
          ctx,
          members.map((member) => ({ ...s, member })),
        )
      : [];
  const total = top?.total ?? places[0]?.placed.total ?? 0;
  const placed = new Map<string, Placed>(members.map((m, i) => [m, places[i]?.placed ?? { total, rank: null, scaled: null }]));
  return { source: 'database', total, top: top?.entries ?? [], placed };
}
