/**
 * How an aggregate becomes a position in a sorted set, and back.
 *
 * Every scope is read in ascending Redis order, so the best member is at index 0:
 * the sorted-set score is the scaled value, negated for `desc` boards (exact, since
 * |value| <= 2^40 < 2^53). Redis orders equal scores by member bytes, so the tie rule is
 * encoded in a fixed-width prefix of the sorted-set member: the reached second for
 * `first`, its complement for `last`, nothing for `member` and `shared`. The member id
 * follows, which makes the remaining ties fall back to the member id, as SPEC §3 asks.
 */

export const TIE_BREAKS = ['first', 'last', 'member', 'shared'] as const;
export type TieBreak = (typeof TIE_BREAKS)[number];
export const SORT_ORDERS = ['desc', 'asc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

const TIME_WIDTH = 11;
const MAX_SECONDS = 10 ** TIME_WIDTH - 1;

export function encodeEntry(tieBreak: TieBreak, reachedSec: number, memberId: string): string {
  switch (tieBreak) {
    case 'first':
      return pad(reachedSec) + memberId;
    case 'last':
      return pad(MAX_SECONDS - reachedSec) + memberId;
    case 'member':
    case 'shared':
      return memberId;
  }
}

export function decodeEntry(tieBreak: TieBreak, entry: string): string {
  return tieBreak === 'first' || tieBreak === 'last' ? entry.slice(TIME_WIDTH) : entry;
}

function pad(seconds: number): string {
  if (seconds < 0 || seconds > MAX_SECONDS) throw new RangeError(`reached time out of range: ${seconds}`);
  return String(seconds).padStart(TIME_WIDTH, '0');
}

/** Sorted-set score for a scaled value: ascending Redis order must mean best first. */
export function sortScore(order: SortOrder, scaled: bigint): string {
  return (order === 'desc' ? -scaled : scaled).toString();
}

/** Scaled value back from a sorted-set score. */
export function scaledFromSortScore(order: SortOrder, score: string): number {
  const n = Number(score);
  return order === 'desc' ? -n || 0 : n;
}

export interface Placement {
  rank: number;
  total: number;
  percentile: number;
  topPercent: number;
}

export function placement(rank: number, total: number): Placement {
  const percentile = rank / total;
  return { rank, total, percentile, topPercent: Math.max(1, Math.round(percentile * 100)) };
}
