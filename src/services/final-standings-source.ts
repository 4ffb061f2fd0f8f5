import type { AppContext } from '../context.js';
import type { Placed, ScopeRef, SliceEntry } from '../storage/redis/leaderboard-cache.js';
import { resultOfMember, resultsAround, resultsOfMemberMany, resultsOfMembers, resultsPage, type ResultsScope } from '../storage/postgres/final-results-repository.js';
import type { Source } from './standings-source.js';

/**
 * Standings reads of a retired period (closed longer than CLOSED_PERIOD_CACHE_HOURS, its
 * Redis keys removed by the period tick): answered from the final results stored at close,
 * which hold the same ranks the cache held, index-backed, and never by a rebuild into Redis.
 * Same shapes as standings-source, so the standings service only chooses which to ask.
 */

const database: Source = 'database';

function resultsScope(s: ScopeRef): ResultsScope {
  return { board: s.board.id, period: s.period, category: s.category, region: s.region };
}

export async function finalSlice(ctx: AppContext, s: ScopeRef, offset: number, limit: number) {
  const page = await resultsPage(ctx.db, resultsScope(s), offset, limit);
  return { source: database, total: page.total, entries: page.entries as SliceEntry[] };
}

export async function finalPlace(ctx: AppContext, s: ScopeRef, member: string): Promise<{ source: Source; placed: Placed }> {
  return { source: database, placed: await resultOfMember(ctx.db, resultsScope(s), member) };
}

export async function finalPlaceMany(ctx: AppContext, queries: ReadonlyArray<ScopeRef & { member: string }>) {
  const placed = await resultsOfMemberMany(
    ctx.db,
    queries.map((q) => ({ ...resultsScope(q), member: q.member })),
  );
  return placed.map((p) => ({ source: database, placed: p }));
}

export async function finalAround(ctx: AppContext, s: ScopeRef, member: string, radius: number) {
  const near = await resultsAround(ctx.db, resultsScope(s), member, radius);
  return { source: database, total: near.total, entries: near.entries as SliceEntry[] };
}

export async function finalPick(ctx: AppContext, s: ScopeRef, members: readonly string[]) {
  const rows = await resultsOfMembers(ctx.db, resultsScope(s), members);
  return { source: database, picked: rows.map(({ member, scaled, subscore }) => ({ member, scaled, subscore })) };
}

export async function finalSliceAndPlace(ctx: AppContext, s: ScopeRef, offset: number, limit: number, member: string) {
  const [slice, { placed }] = await Promise.all([finalSlice(ctx, s, offset, limit), finalPlace(ctx, s, member)]);
  return { source: database, slice: { total: slice.total, entries: slice.entries }, placed };
}
