import type { Scope } from '../../domain/scope.js';
import type { Db } from '../../storage/postgres/database.js';
import {
  aroundInScope,
  pickInScope,
  placeManyInScope,
  rankScope,
} from '../../storage/postgres/standings-repository.js';
import type { Placed } from '../../domain/ranking.js';
import { cacheFirst } from './cache-first.js';
import type { DatabaseReads } from './reader.js';
import { targetsFromReads } from './database-targets.js';

/**
 * An open (or closing) period's ranking computed from member aggregates, with the ranks
 * the cache gives. Each read, whatever its number of scopes or members, takes one slot of
 * the bounded fallback (ctx.fallback), so a burst of them while Redis recovers leaves the
 * rest of the service its connections.
 */
const rankedAggregates: DatabaseReads = {
  slice: (ctx, s, offset, limit) => ctx.fallback.run((pg) => rankScope(pg, s, { offset, limit })),
  sliceAndPlace: (ctx, s, offset, limit, member) =>
    ctx.fallback.run(async (pg) => ({
      slice: await rankScope(pg, s, { offset, limit }),
      placed: (await placementsIn(pg, s, [member])).placed.get(member)!,
    })),
  place: (ctx, s, member) => ctx.fallback.run(async (pg) => (await placementsIn(pg, s, [member])).placed.get(member)!),
  // One statement per scope, whatever its number of members.
  placeMany: (ctx, queries) =>
    ctx.fallback.run(async (pg) => {
      const byScope = new Map<string, { scope: Scope; members: string[] }>();
      for (const q of queries) {
        const key = JSON.stringify([q.board.id, q.period, q.category, q.region]);
        const group = byScope.get(key) ?? { scope: q, members: [] };
        group.members.push(q.member);
        byScope.set(key, group);
      }
      const placed = new Map<string, Map<string, Placed>>();
      for (const [key, group] of byScope) placed.set(key, (await placementsIn(pg, group.scope, group.members)).placed);
      return queries.map((q) =>
        placed.get(JSON.stringify([q.board.id, q.period, q.category, q.region]))!.get(q.member)!,
      );
    }),
  around: (ctx, s, member, radius) => ctx.fallback.run((pg) => aroundInScope(pg, s, member, radius)),
  pick: (ctx, s, members) => ctx.fallback.run(async (pg) => ({ picked: await pickInScope(pg, s, members) })),
  // At most two statements (the top, the members with the total), whatever the number of members.
  watch: (ctx, s, members, topN) =>
    ctx.fallback.run(async (pg) => {
      const top = topN > 0 ? await rankScope(pg, s, { offset: 0, limit: topN }) : null;
      const { total, placed } = await placementsIn(pg, s, members, top?.total);
      return { total, top: top?.entries ?? [], placed };
    }),
  // Made of the reads above, each its own fallback slot: a rare read, while Redis lacks the scope.
  targets: (ctx, s, q) => targetsFromReads(rankedAggregates, ctx, s, q),
};

/** The scope's total and each given member's placement, ranked or not: one statement, none for no members when the total is known. */
async function placementsIn(
  pg: Db,
  s: Scope,
  members: readonly string[],
  knownTotal?: number,
): Promise<{ total: number; placed: Map<string, Placed> }> {
  const { total, placed } =
    members.length === 0 && knownTotal !== undefined
      ? { total: knownTotal, placed: [] }
      : await placeManyInScope(pg, s, members);
  const byMember = new Map<string, Placed>(members.map((m) => [m, { total, rank: null, scaled: null }]));
  for (const { standing } of placed) {
    byMember.set(standing.member, {
      total,
      rank: standing.rank,
      scaled: standing.scaled,
      ...(standing.subscore === undefined ? {} : { subscore: standing.subscore }),
    });
  }
  return { total, placed: byMember };
}

export const openPeriodReader = cacheFirst(rankedAggregates, { rebuildOnMiss: true });
