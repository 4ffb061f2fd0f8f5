import { aggregate, rankAll, type RefEvent, type RefStanding } from './reference.js';
import { referenceEntrants } from './entrants-reference.js';

const byTimeThenKey = (x: RefEvent, y: RefEvent) =>
  x.atMs - y.atMs || Buffer.compare(Buffer.from(x.key), Buffer.from(y.key));

export interface RefLeague {
  tiers: string[];
  bucketSize: number;
  promote: number;
  relegate: number;
  startTier: string;
}

export interface RefLeagueOutcome {
  /** Entrants in the order they entered. */
  entrants: string[];
  /** The events that count: entrants' first maxAttempts by (occurredAt, key). */
  counted: RefEvent[];
  /** Bucket -> its standings (sum, desc, tieBreak first). */
  buckets: Map<string, RefStanding[]>;
  /** Member -> the tier they play in next. */
  nextTier: Map<string, string>;
}

/**
 * Entrants and leagues for one period of a `sum`/`desc`/`first` board, modelled for the tests
 * only: entry follows the batches in order (within a batch, first events by (occurredAt, key));
 * attempts and standings are order-free. Members play in `tierOf` (startTier if absent). The
 * first `waiting` batches arrive while the previous period's close is pending: their members
 * are placed at that close, in the order of their first events; later ones as they enter.
 */
export function referenceLeague(
  batches: ReadonlyArray<readonly RefEvent[]>,
  maxMembers: number,
  maxAttempts: number,
  league: RefLeague,
  options: { tierOf?: ReadonlyMap<string, string>; waiting?: number } = {},
): RefLeagueOutcome {
  const { entrants } = referenceEntrants(batches, maxMembers);
  const all = batches.flat();
  const counted = entrants.flatMap((m) =>
    all
      .filter((e) => e.member === m)
      .sort(byTimeThenKey)
      .slice(0, maxAttempts),
  );
  const waitingCount = referenceEntrants(batches.slice(0, options.waiting ?? 0), maxMembers).entrants.length;
  // The close sees only the events stored while it was pending.
  const early = batches.slice(0, options.waiting ?? 0).flat();
  const firstOf = (m: string) => early.filter((e) => e.member === m).sort(byTimeThenKey)[0]!;
  const waited = entrants.slice(0, waitingCount).sort((a, b) => byTimeThenKey(firstOf(a), firstOf(b)));
  const placementOrder = [...waited, ...entrants.slice(waitingCount)];
  const tierOf = (m: string) => options.tierOf?.get(m) ?? league.startTier;
  const slots = new Map<string, number>();
  const bucketMembers = new Map<string, string[]>();
  for (const member of placementOrder) {
    const tier = tierOf(member);
    const slot = (slots.get(tier) ?? 0) + 1;
    slots.set(tier, slot);
    const bucket = `${tier}-${Math.floor((slot - 1) / league.bucketSize) + 1}`;
    bucketMembers.set(bucket, [...(bucketMembers.get(bucket) ?? []), member]);
  }
  const buckets = new Map<string, RefStanding[]>();
  const nextTier = new Map<string, string>();
  for (const [bucket, members] of bucketMembers) {
    const inBucket = new Set(members);
    const standings = rankAll(
      aggregate(
        counted.filter((e) => inBucket.has(e.member)),
        'sum',
        'desc',
      ),
      'desc',
      'first',
    );
    buckets.set(bucket, standings);
    for (const member of members) nextTier.set(member, tierOf(member));
    standings.forEach((s, i) => {
      const t = league.tiers.indexOf(tierOf(s.member));
      const place = i + 1;
      let move = 0;
      if (place <= league.promote) move = t < league.tiers.length - 1 ? 1 : 0;
      else if (place > standings.length - league.relegate) move = t > 0 ? -1 : 0;
      nextTier.set(s.member, league.tiers[t + move]!);
    });
  }
  return { entrants, counted, buckets, nextTier };
}
