import type { AppContext } from '../../context.js';
import { positionOfFraction } from '../../domain/cutoffs.js';
import type { Placed } from '../../domain/ranking.js';
import type { Scope } from '../../domain/scope.js';
import type { PositionEntry, SliceEntry, TargetQuery, Targets } from '../../storage/redis/leaderboard-cache.js';
import type { DatabaseReads } from './reader.js';

/**
 * A targets read (goals, cutoffs) made of the Postgres side's own reads, so it answers the
 * ranks they answer whatever holds the scope (member aggregates or final results): the
 * member with one neighbour each side (the entry above is the one before it), a one-entry
 * page per distinct position, and the members' placements in one read. Only the cache's
 * side needs a script of its own: there it is one round trip.
 */
export async function targetsFromReads(
  reads: Pick<DatabaseReads, 'around' | 'slice' | 'watch'>,
  ctx: AppContext,
  s: Scope,
  q: TargetQuery,
): Promise<Targets> {
  let total: number | undefined;
  let own: Placed | null = null;
  let next: SliceEntry | null = null;
  if (q.member !== null) {
    const near = await reads.around(ctx, s, q.member, 1);
    total = near.total;
    const at = near.entries.findIndex((e) => e.member === q.member);
    const mine = near.entries[at];
    own = mine ? placedOf(total, mine) : { total, rank: null, scaled: null };
    next = at > 0 ? near.entries[at - 1]! : null;
  }
  const read = new Map<number, PositionEntry | null>();
  const entryAt = async (position: number): Promise<PositionEntry | null> => {
    if (!read.has(position)) {
      const page = await reads.slice(ctx, s, position - 1, 1);
      total = page.total;
      const found = page.entries[0];
      read.set(position, found ? withoutRank(found) : null);
    }
    return read.get(position)!;
  };
  const positions: Array<PositionEntry | null> = [];
  for (const position of q.positions) positions.push(await entryAt(position));
  if (total === undefined && q.fractions.length > 0) await entryAt(1);
  const fractions: Targets['fractions'] = [];
  for (const fraction of q.fractions) {
    const position = positionOfFraction(total!, fraction);
    fractions.push({ position, entry: await entryAt(position) });
  }
  const placed = q.members.length > 0 ? (await reads.watch(ctx, s, q.members, 0)).placed : new Map<string, Placed>();
  total ??= q.members.length > 0 ? [...placed.values()][0]!.total : (await reads.slice(ctx, s, 0, 1)).total;
  return { total, own, next, positions, fractions, placed };
}

/** A page's entry as a position's: the cache's side reads no rank there (see PositionEntry). */
function withoutRank({ rank: _rank, ...entry }: SliceEntry): PositionEntry {
  return entry;
}

function placedOf(total: number, e: SliceEntry): Placed {
  return {
    total,
    rank: e.rank,
    scaled: e.scaled,
    ...(e.subscore === undefined ? {} : { subscore: e.subscore }),
  };
}
