import type { AppContext } from '../../context.js';
import { Unavailable } from '../../domain/errors.js';
import type { MemberInScope, Scope } from '../../domain/scope.js';
import { isMiss, type Miss } from '../../storage/redis/leaderboard-cache.js';
import type { Placed } from '../../domain/ranking.js';
import { requestScopeRebuilds } from '../rebuild-service.js';
import type { DatabaseReads, Sourced, StandingsReader } from './reader.js';

/**
 * The outage rule, once for every read: the cache when it holds the whole category; else
 * (category missing, or the leaderboard Redis unreachable) Postgres with the same ranks,
 * `source: "database"`. Any other failure is the read's own and is not hidden.
 *
 * `rebuildOnMiss` (open periods): a miss asks for one deduplicated rebuild, before Postgres
 * is asked, so that a read refused by the fallback's bounds still brings the cache back; a
 * read never rebuilds inline. An unreachable Redis asks for none: one that comes back with
 * its keys needs none, and one that lost them answers the next read with a real miss.
 * A closed period's misses ask for none: a rebuild refills from aggregates, which later
 * exclusions, voids and erasures changed, while its final results keep the ranks of the close.
 */
export function cacheFirst(database: DatabaseReads, { rebuildOnMiss }: { rebuildOnMiss: boolean }): StandingsReader {
  async function read<T extends object>(
    ctx: AppContext,
    s: Scope,
    cached: () => Promise<T | Miss>,
    fromDatabase: () => Promise<T>,
  ): Promise<Sourced<T>> {
    const got = await reachable(ctx, cached);
    if (!isMiss(got)) return { source: 'cache', ...got };
    if (rebuildOnMiss) requestRebuilds(ctx, [[s, got]]);
    return { source: 'database', ...(await fromDatabase()) };
  }
  return {
    slice: (ctx, s, offset, limit) =>
      read(
        ctx,
        s,
        () => ctx.leaderboard.slice(s, offset, limit),
        () => database.slice(ctx, s, offset, limit),
      ),
    sliceAndPlace: (ctx, s, offset, limit, member) =>
      read(
        ctx,
        s,
        () => ctx.leaderboard.sliceAndPlace(s, offset, limit, member),
        () => database.sliceAndPlace(ctx, s, offset, limit, member),
      ),
    place: (ctx, s, member) =>
      read(
        ctx,
        s,
        () => ctx.leaderboard.place(s, member),
        () => database.place(ctx, s, member),
      ),
    around: (ctx, s, member, radius) =>
      read(
        ctx,
        s,
        () => ctx.leaderboard.around(s, member, radius),
        () => database.around(ctx, s, member, radius),
      ),
    pick: (ctx, s, members) =>
      read(
        ctx,
        s,
        () => ctx.leaderboard.pick(s, members),
        () => database.pick(ctx, s, members),
      ),
    watch: (ctx, s, members, topN) =>
      read(
        ctx,
        s,
        () => ctx.leaderboard.watch(s, members, topN),
        () => database.watch(ctx, s, members, topN),
      ),
    targets: (ctx, s, q) =>
      read(
        ctx,
        s,
        () => ctx.leaderboard.targets(s, q),
        () => database.targets(ctx, s, q),
      ),
    // One pipeline for all placements; Postgres only for the scopes Redis lacks, in one call.
    async placeMany(ctx, queries, options = {}) {
      const got = await reachable(ctx, () => ctx.leaderboard.placeMany(queries));
      const cached = (i: number): Placed | Miss => (isMiss(got) ? got : got[i]!);
      const missed: Array<[MemberInScope, Miss]> = [];
      queries.forEach((q, i) => {
        const placed = cached(i);
        if (isMiss(placed)) missed.push([q, placed]);
      });
      if (missed.length === 0) return (got as Placed[]).map((placed) => ({ source: 'cache', ...placed }));
      if (rebuildOnMiss && options.requestRebuilds !== false) requestRebuilds(ctx, missed);
      const fromDatabase = await database.placeMany(
        ctx,
        missed.map(([q]) => q),
      );
      let next = 0;
      return queries.map((_, i) => {
        const placed = cached(i);
        return isMiss(placed) ? { source: 'database', ...fromDatabase[next++]! } : { source: 'cache', ...placed };
      });
    },
  };
}

/** What a cache read answers when the leaderboard Redis cannot be reached: `rebuilding`, so no rebuild is asked for. */
const UNREACHABLE: Miss = { miss: true, rebuilding: true };

/**
 * The cache's answer, or UNREACHABLE when the leaderboard Redis is down or this process may
 * not read it (`access.reads`: a key layout it does not know, or one not handed over yet;
 * services/key-layout-watch.ts); any other failure is thrown.
 */
async function reachable<T>(ctx: AppContext, cached: () => Promise<T>): Promise<T | Miss> {
  if (!ctx.leaderboard.access.reads) return UNREACHABLE;
  try {
    return await cached();
  } catch (err) {
    const known = ctx.failureOf(err);
    // With one Redis for queue and leaderboards, both connections drop together and the
    // outage may be named after the queue's: the leaderboard connection's state decides.
    const leaderboardDown =
      known instanceof Unavailable &&
      (known.dependency === 'leaderboard-redis' || ctx.leaderboard.redis.status !== 'ready');
    if (!leaderboardDown) throw err;
    ctx.failures.warn(
      'leaderboard-redis',
      known.message,
      'standings read from Postgres: the leaderboard Redis is unavailable',
    );
    return UNREACHABLE;
  }
}

/** One rebuild request per missed category not being rebuilt already (the queue deduplicates across processes). */
function requestRebuilds(ctx: AppContext, missed: ReadonlyArray<readonly [Scope, Miss]>): void {
  const categories = new Map<string, { board: string; period: string; category: string }>();
  for (const [s, miss] of missed) {
    if (!miss.rebuilding)
      categories.set(JSON.stringify([s.board.id, s.period, s.category]), {
        board: s.board.id,
        period: s.period,
        category: s.category,
      });
  }
  if (categories.size > 0) requestScopeRebuilds(ctx, [...categories.values()], 'read');
}
