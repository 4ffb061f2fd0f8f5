import { aggregate, rankAll, type RefEvent, type RefStanding } from './reference.js';
import { referenceEntrants } from './entrants-reference.js';

const byTimeThenKey = (x: RefEvent, y: RefEvent) => x.atMs - y.atMs || Buffer.compare(Buffer.from(x.key), Buffer.from(y.key));

export interface RefLeague {
  tiers: string[];
  bucketSize: number;
  promote: number;
  relegate: number;
  startTier: string;
}

export interface RefLeagueOutcome {
  /** Entrants in the order they entered (= the order they were placed). */
  entrants: string[];
  /** The events that count: entrants' first maxAttempts by (occurredAt, key). */
  counted: RefEvent[];
  /** Bucket -> its standings (sum, desc, tieBreak first). */
  buckets: Map<string, RefStanding[]>;
  /** Member -> the tier they play in next. */
  nextTier: Map<string, string>;
}

/**
 * SPEC §9.1 and §9.2 for one period of a `sum`/`desc`/`first` board whose members are all new,
 * modelled for the tests only: entry and placement follow the batches in order (within a batch,
 * first events by (occurredAt, key)); attempts and standings are order-free.
 */
export function referenceLeague(batches: ReadonlyArray<readonly RefEvent[]>, maxMembers: number, maxAttempts: number, league: RefLeague): RefLeagueOutcome {
  const { entrants } = referenceEntrants(batches, maxMembers);
  const all = batches.flat();
  const counted = entrants.flatMap((m) =>
    all
      .filter((e) => e.member === m)
      .sort(byTimeThenKey)
      .slice(0, maxAttempts),
  );
  const buckets = new Map<string, RefStanding[]>();
  const bucketOf = (slot: number) => `${league.startTier}-${Math.floor((slot - 1) / league.bucketSize) + 1}`;
  entrants.forEach((member, i) => {
    const bucket = bucketOf(i + 1);
    if (!buckets.has(bucket)) buckets.set(bucket, []);
  });
  for (const bucket of buckets.keys()) {
    const members = new Set(entrants.filter((_, i) => bucketOf(i + 1) === bucket));
    buckets.set(
      bucket,
      rankAll(
        aggregate(
          counted.filter((e) => members.has(e.member)),
          'sum',
          'desc',
        ),
        'desc',
        'first',
      ),
    );
  }
  const nextTier = new Map<string, string>();
  const t = league.tiers.indexOf(league.startTier);
  for (const standings of buckets.values()) {
    standings.forEach((s, i) => {
      const place = i + 1;
      let move = 0;
      if (place <= league.promote) move = t < league.tiers.length - 1 ? 1 : 0;
      else if (place > standings.length - league.relegate) move = t > 0 ? -1 : 0;
      nextTier.set(s.member, league.tiers[t + move]!);
    });
  }
  return { entrants, counted, buckets, nextTier };
}
