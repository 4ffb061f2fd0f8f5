import type { AppContext } from '../../context.js';
import { isMiss, type Placed, type ScopeRef, type SliceEntry } from '../../storage/redis/leaderboard-cache.js';
import { countScope, pickInScope, rankScope, type DbScope } from '../../storage/postgres/standings-repository.js';
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
 * answer comes from Postgres in at most three queries (top, the watched members, the total),
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
  const [top, rows] = await Promise.all([
    topN > 0 ? rankScope(ctx.db, s.board, scope, { offset: 0, limit: topN }) : null,
    pickInScope(ctx.db, s.board, scope, members),
  ]);
  const total = top?.total ?? rows[0]?.total ?? (await countScope(ctx.db, s.board, scope));
  const placed = new Map<string, Placed>(members.map((m) => [m, { total, rank: null, scaled: null }]));
  for (const r of rows) {
    placed.set(r.member_id, { total, rank: s.board.tieBreak === 'shared' ? Number(r.shared_rank) : Number(r.position), scaled: Number(r.value) });
  }
  return { total: Number(total), top: top?.entries ?? [], placed };
}
