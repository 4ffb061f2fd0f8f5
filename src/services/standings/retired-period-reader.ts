import {
  resultOfMember,
  resultsAround,
  resultsOfMemberMany,
  resultsOfMembers,
  resultsPage,
} from '../../storage/postgres/final-results-repository.js';
import type { Placed } from '../../domain/ranking.js';
import type { DatabaseReads, Sourced, StandingsReader } from './reader.js';
import { targetsFromReads } from './database-targets.js';

/**
 * A closed period's final results, stored at close: the ranks the cache held then, read on
 * the table's indexes (each read one or two statements, O(log N) however large the period).
 * Not bounded by the fallback: they are the only copy of a retired period, not a stand-in.
 */
export const finalResults: DatabaseReads = {
  slice: (ctx, s, offset, limit) => resultsPage(ctx.db, s, offset, limit),
  async sliceAndPlace(ctx, s, offset, limit, member) {
    const [slice, placed] = await Promise.all([
      resultsPage(ctx.db, s, offset, limit),
      resultOfMember(ctx.db, s, member),
    ]);
    return { slice, placed };
  },
  place: (ctx, s, member) => resultOfMember(ctx.db, s, member),
  placeMany: (ctx, queries) => resultsOfMemberMany(ctx.db, queries),
  around: (ctx, s, member, radius) => resultsAround(ctx.db, s, member, radius),
  pick: async (ctx, s, members) => ({ picked: await resultsOfMembers(ctx.db, s, members) }),
  async watch(ctx, s, members, topN) {
    const top = topN > 0 ? await resultsPage(ctx.db, s, 0, topN) : null;
    const places =
      members.length > 0
        ? await resultsOfMemberMany(
            ctx.db,
            members.map((member) => ({ ...s, member })),
          )
        : [];
    const total = top?.total ?? places[0]?.total ?? 0;
    const placed = new Map<string, Placed>(
      members.map((m, i) => [m, places[i] ?? { total, rank: null, scaled: null }]),
    );
    return { total, top: top?.entries ?? [], placed };
  },
  targets: (ctx, s, q) => targetsFromReads(finalResults, ctx, s, q),
};

const database = <T extends object>(answer: T): Sourced<T> => ({ source: 'database', ...answer });

/**
 * A retired period (closed longer than CLOSED_PERIOD_CACHE_HOURS, its Redis keys removed
 * by the period tick): its final results only, and never a rebuild into Redis.
 */
export const retiredPeriodReader: StandingsReader = {
  slice: async (...args) => database(await finalResults.slice(...args)),
  sliceAndPlace: async (...args) => database(await finalResults.sliceAndPlace(...args)),
  place: async (...args) => database(await finalResults.place(...args)),
  placeMany: async (...args) => (await finalResults.placeMany(...args)).map(database),
  around: async (...args) => database(await finalResults.around(...args)),
  pick: async (...args) => database(await finalResults.pick(...args)),
  watch: async (...args) => database(await finalResults.watch(...args)),
  targets: async (...args) => database(await finalResults.targets(...args)),
};
