import type { AppContext } from '../context.js';
import { isMiss, type Miss, type ScopeRef } from '../storage/redis/leaderboard-cache.js';
import { CACHE_UNREACHABLE, fromCache, type Source } from './standings-source.js';
import { finalAround, finalPick, finalPlace, finalPlaceMany, finalSlice, finalSliceAndPlace } from './final-standings-source.js';
import { readRetired, type WatchedScope } from './realtime/watch-source.js';

/**
 * Standings reads of a closed period not retired yet. Its Redis keys, while they are
 * complete, hold the ranking of the close, which is its final results (moderation projects
 * into open periods only, and an erasure drops a closed period's completeness marks). When
 * Redis lacks the category (lost, flushed, or dropped by an erasure) the answer comes from
 * the final results, exactly as for a retired period, and no rebuild is asked for: a
 * rebuild refills from aggregates, which later exclusions, voids and erasures changed.
 */

const cache: Source = 'cache';

async function cachedOrFinal<C, R>(ctx: AppContext, read: () => Promise<C | Miss>, fromCached: (cached: C) => R, final: () => Promise<R>): Promise<R> {
  const cached = await fromCache(ctx, read);
  return isMiss(cached) ? final() : fromCached(cached);
}

export function closedSlice(ctx: AppContext, s: ScopeRef, offset: number, limit: number) {
  return cachedOrFinal(
    ctx,
    () => ctx.leaderboard.slice(s, offset, limit),
    (c) => ({ source: cache, total: c.total, entries: c.entries }),
    () => finalSlice(ctx, s, offset, limit),
  );
}

export function closedSliceAndPlace(ctx: AppContext, s: ScopeRef, offset: number, limit: number, member: string) {
  return cachedOrFinal(
    ctx,
    () => ctx.leaderboard.sliceAndPlace(s, offset, limit, member),
    (c) => ({ source: cache, slice: c.slice, placed: c.placed }),
    () => finalSliceAndPlace(ctx, s, offset, limit, member),
  );
}

export function closedPlace(ctx: AppContext, s: ScopeRef, member: string) {
  return cachedOrFinal(
    ctx,
    () => ctx.leaderboard.place(s, member),
    (placed) => ({ source: cache, placed }),
    () => finalPlace(ctx, s, member),
  );
}

export function closedAround(ctx: AppContext, s: ScopeRef, member: string, radius: number) {
  return cachedOrFinal(
    ctx,
    () => ctx.leaderboard.around(s, member, radius),
    (c) => ({ source: cache, total: c.total, entries: c.entries }),
    () => finalAround(ctx, s, member, radius),
  );
}

export function closedPick(ctx: AppContext, s: ScopeRef, members: readonly string[]) {
  return cachedOrFinal(
    ctx,
    () => ctx.leaderboard.pick(s, members),
    (c) => ({ source: cache, picked: c.map(({ member, scaled, subscore }) => ({ member, scaled, subscore })) }),
    () => finalPick(ctx, s, members),
  );
}

/** One pipeline for all placements; the final results only for the scopes Redis lacks, in one statement. */
export async function closedPlaceMany(ctx: AppContext, queries: ReadonlyArray<ScopeRef & { member: string }>) {
  const cached = await fromCache(
    ctx,
    () => ctx.leaderboard.placeMany(queries),
    () => queries.map(() => CACHE_UNREACHABLE),
  );
  const missed = queries.filter((_, i) => isMiss(cached[i]));
  const final = missed.length > 0 ? await finalPlaceMany(ctx, missed) : [];
  let next = 0;
  return cached.map((placed) => (isMiss(placed) ? final[next++]! : { source: cache, placed }));
}

/** A stream's scope state: one script call, or the final results (two statements) when Redis lacks the category. */
export function closedWatched(ctx: AppContext, s: ScopeRef, members: readonly string[], topN: number): Promise<WatchedScope> {
  return cachedOrFinal(
    ctx,
    () => ctx.leaderboard.watch(s, members, topN),
    (c): WatchedScope => ({ source: cache, ...c }),
    () => readRetired(ctx, s, members, topN),
  );
}
