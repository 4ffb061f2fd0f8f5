import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { isMiss, type Miss, type Placed, type ScopeRef, type SliceEntry } from '../storage/redis/leaderboard-cache.js';
import { pickInScope, placeInScope, rankScope, type DbScope } from '../storage/postgres/standings-repository.js';
import { requestScopeRebuilds } from './rebuild-service.js';

/**
 * Every standings read goes through here: Redis when it holds the whole category, else
 * Postgres with the same ranks (`source: "database"`) plus one deduplicated rebuild
 * request. A read never rebuilds inline.
 */
export type Source = 'cache' | 'database';

function dbScope(s: ScopeRef): DbScope {
  return { period: s.period, category: s.category, region: s.region };
}

export function fellBack(ctx: AppContext, s: ScopeRef, missed: Miss): 'database' {
  if (!missed.rebuilding) requestScopeRebuilds(ctx, [{ board: s.board.id, period: s.period, category: s.category }], 'read');
  return 'database';
}

export async function readSlice(ctx: AppContext, s: ScopeRef, offset: number, limit: number) {
  const cached = await ctx.leaderboard.slice(s, offset, limit);
  if (!isMiss(cached)) return { source: 'cache' as Source, ...cached };
  const db = await rankScope(ctx.db, s.board, dbScope(s), { offset, limit });
  return { source: fellBack(ctx, s, cached) as Source, total: db.total, entries: db.entries as SliceEntry[] };
}

export async function placeFromDatabase(ctx: AppContext, board: Board, scope: DbScope, member: string): Promise<Placed> {
  const { total, standing } = await placeInScope(ctx.db, board, scope, member);
  return { total, rank: standing?.rank ?? null, scaled: standing?.scaled ?? null };
}

export async function readPlace(ctx: AppContext, s: ScopeRef, member: string): Promise<{ source: Source; placed: Placed }> {
  const cached = await ctx.leaderboard.place(s, member);
  if (!isMiss(cached)) return { source: 'cache', placed: cached };
  return { source: fellBack(ctx, s, cached), placed: await placeFromDatabase(ctx, s.board, dbScope(s), member) };
}

/** Placements on many scopes: one pipeline, and Postgres only for scopes Redis lacks. */
export async function readPlaceMany(ctx: AppContext, queries: ReadonlyArray<ScopeRef & { member: string }>) {
  const cached = await ctx.leaderboard.placeMany(queries);
  return Promise.all(
    cached.map(async (placed, i) => {
      if (!isMiss(placed)) return { source: 'cache' as Source, placed };
      const q = queries[i]!;
      return { source: fellBack(ctx, q, placed) as Source, placed: await placeFromDatabase(ctx, q.board, dbScope(q), q.member) };
    }),
  );
}

export async function readAround(ctx: AppContext, s: ScopeRef, member: string, radius: number) {
  const cached = await ctx.leaderboard.around(s, member, radius);
  if (!isMiss(cached)) return { source: 'cache' as Source, ...cached };
  const { total, position } = await placeInScope(ctx.db, s.board, dbScope(s), member);
  if (position === null) return { source: fellBack(ctx, s, cached) as Source, total, entries: [] as SliceEntry[] };
  const offset = Math.max(0, position - 1 - radius);
  const page = await rankScope(ctx.db, s.board, dbScope(s), { offset, limit: position - 1 - offset + radius + 1 });
  return { source: fellBack(ctx, s, cached) as Source, total, entries: page.entries as SliceEntry[] };
}

/** The given members ranked in the scope, in scope order. */
export async function readPick(ctx: AppContext, s: ScopeRef, members: readonly string[]) {
  const cached = await ctx.leaderboard.pick(s, members);
  if (!isMiss(cached)) return { source: 'cache' as Source, picked: cached.map((p) => ({ member: p.member, scaled: p.scaled })) };
  const rows = await pickInScope(ctx.db, s.board, dbScope(s), members);
  return { source: fellBack(ctx, s, cached) as Source, picked: rows.map((r) => ({ member: r.member_id, scaled: r.value })) };
}
