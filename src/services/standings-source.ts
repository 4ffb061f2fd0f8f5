import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import type { Db } from '../storage/postgres/database.js';
import { isMiss, type Miss, type Placed, type ScopeRef, type SliceEntry } from '../storage/redis/leaderboard-cache.js';
import { aroundInScope, pickInScope, placeInScope, placeManyInScope, rankScope, type DbScope, type DbStanding } from '../storage/postgres/standings-repository.js';
import { requestScopeRebuilds } from './rebuild-service.js';
import { Unavailable } from '../domain/errors.js';

/**
 * Every standings read goes through here: Redis when it holds the whole category, else
 * Postgres with the same ranks (`source: "database"`, through ctx.fallback's bounds) plus
 * one deduplicated rebuild request, asked for first so that a read refused by those
 * bounds still brings the cache back. A read never rebuilds inline.
 */
export type Source = 'cache' | 'database';

function dbScope(s: ScopeRef): DbScope {
  return { period: s.period, category: s.category, region: s.region };
}

export function fellBack(ctx: AppContext, s: ScopeRef, missed: Miss): 'database' {
  if (!missed.rebuilding) requestScopeRebuilds(ctx, [{ board: s.board.id, period: s.period, category: s.category }], 'read');
  return 'database';
}

/**
 * The cache's answer, or a miss when the leaderboard Redis cannot be reached: the read is
 * then served from Postgres like any miss (Postgres is the truth), and no rebuild is asked
 * for, since a Redis that comes back with its keys needs none (and one that lost them
 * answers the next read with a real miss, which asks).
 */
export async function fromCache<T, M = Miss>(ctx: AppContext, read: () => Promise<T | M>, missed: () => M = () => CACHE_UNREACHABLE as M): Promise<T | M> {
  try {
    return await read();
  } catch (err) {
    const known = ctx.failureOf(err);
    if (!(known instanceof Unavailable) || known.dependency !== 'leaderboard-redis') throw err;
    ctx.failures.warn('leaderboard-redis', known.message, 'standings read from Postgres: the leaderboard Redis is unavailable');
    return missed();
  }
}

/** `rebuilding` so that fellBack asks for no rebuild (see fromCache). */
export const CACHE_UNREACHABLE: Miss = { miss: true, rebuilding: true };

export async function readSlice(ctx: AppContext, s: ScopeRef, offset: number, limit: number) {
  const cached = await fromCache(ctx, () => ctx.leaderboard.slice(s, offset, limit));
  if (!isMiss(cached)) return { source: 'cache' as Source, ...cached };
  const source = fellBack(ctx, s, cached);
  const db = await ctx.fallback.run((pg) => rankScope(pg, s.board, dbScope(s), { offset, limit }));
  return { source: source as Source, total: db.total, entries: db.entries as SliceEntry[] };
}

/** A page and one member's placement (`me`), from one Redis transaction or under one fallback slot. */
export async function readSliceAndPlace(ctx: AppContext, s: ScopeRef, offset: number, limit: number, member: string) {
  const cached = await ctx.leaderboard.sliceAndPlace(s, offset, limit, member);
  if (!isMiss(cached)) return { source: 'cache' as Source, ...cached };
  const source = fellBack(ctx, s, cached);
  const read = await ctx.fallback.run(async (pg) => {
    const page = await rankScope(pg, s.board, dbScope(s), { offset, limit });
    return { slice: { total: page.total, entries: page.entries }, placed: await placeFromDatabase(pg, s.board, dbScope(s), member) };
  });
  return { source: source as Source, ...read };
}

async function placeFromDatabase(pg: Db, board: Board, scope: DbScope, member: string): Promise<Placed> {
  const { total, standing } = await placeInScope(pg, board, scope, member);
  return placedOf(total, standing);
}

function placedOf(total: number, standing: DbStanding | null | undefined): Placed {
  if (!standing) return { total, rank: null, scaled: null };
  return { total, rank: standing.rank, scaled: standing.scaled, ...(standing.subscore === undefined ? {} : { subscore: standing.subscore }) };
}

export async function readPlace(ctx: AppContext, s: ScopeRef, member: string): Promise<{ source: Source; placed: Placed }> {
  const cached = await fromCache(ctx, () => ctx.leaderboard.place(s, member));
  if (!isMiss(cached)) return { source: 'cache', placed: cached };
  const source = fellBack(ctx, s, cached);
  return { source, placed: await ctx.fallback.run((pg) => placeFromDatabase(pg, s.board, dbScope(s), member)) };
}

/**
 * Placements on many scopes: one pipeline, and Postgres only for scopes Redis lacks, one
 * statement per such scope (whatever its number of members), under a single fallback slot
 * (a request takes one, whatever its boards). `requestRebuilds: false` reads without asking
 * for rebuilds of what Redis lacks, for a read that may name a period not created yet.
 */
export async function readPlaceMany(ctx: AppContext, queries: ReadonlyArray<ScopeRef & { member: string }>, options: { requestRebuilds?: boolean } = {}) {
  const cached = await fromCache(
    ctx,
    () => ctx.leaderboard.placeMany(queries),
    () => queries.map(() => CACHE_UNREACHABLE),
  );
  const missedByScope = new Map<string, number[]>();
  cached.forEach((placed, i) => {
    if (!isMiss(placed)) return;
    const q = queries[i]!;
    if (options.requestRebuilds !== false) fellBack(ctx, q, placed);
    const scopeKey = JSON.stringify([q.board.id, q.period, q.category, q.region]);
    missedByScope.set(scopeKey, [...(missedByScope.get(scopeKey) ?? []), i]);
  });
  const fromDb = new Map<number, Placed>();
  if (missedByScope.size > 0) {
    await ctx.fallback.run(async (pg) => {
      for (const indexes of missedByScope.values()) {
        const q = queries[indexes[0]!]!;
        const { total, placed } = await placeManyInScope(
          pg,
          q.board,
          dbScope(q),
          indexes.map((i) => queries[i]!.member),
        );
        const byMember = new Map(placed.map((p) => [p.standing.member, p.standing]));
        for (const i of indexes) {
          const standing = byMember.get(queries[i]!.member);
          fromDb.set(i, placedOf(total, standing));
        }
      }
    });
  }
  return cached.map((placed, i) => {
    if (!isMiss(placed)) return { source: 'cache', placed };
    return { source: 'database', placed: fromDb.get(i)! };
  });
}

export async function readAround(ctx: AppContext, s: ScopeRef, member: string, radius: number) {
  const cached = await fromCache(ctx, () => ctx.leaderboard.around(s, member, radius));
  if (!isMiss(cached)) return { source: 'cache' as Source, ...cached };
  const source = fellBack(ctx, s, cached);
  const around = await ctx.fallback.run((pg) => aroundInScope(pg, s.board, dbScope(s), member, radius));
  return { source: source as Source, ...around };
}

/** The given members ranked in the scope, in scope order. */
export async function readPick(ctx: AppContext, s: ScopeRef, members: readonly string[]) {
  const cached = await fromCache(ctx, () => ctx.leaderboard.pick(s, members));
  if (!isMiss(cached)) return { source: 'cache' as Source, picked: cached.map(({ member, scaled, subscore }) => ({ member, scaled, subscore })) };
  const source = fellBack(ctx, s, cached);
  const rows = await ctx.fallback.run((pg) => pickInScope(pg, s.board, dbScope(s), members));
  return { source: source as Source, picked: rows.map((r) => ({ member: r.member_id, scaled: r.value, subscore: r.subscore })) };
}
