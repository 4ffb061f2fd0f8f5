/**
 * How an aggregate becomes a position in a sorted set, and back.
 *
 * Every scope is read in ascending Redis order, so the best member is at index 0:
 * the sorted-set score is the scaled value, negated for `desc` boards (exact, since
 * |value| <= 2^40 < 2^53). Redis orders equal scores by member bytes, so the tie rule is
 * encoded in a fixed-width prefix of the sorted-set member: the reached second for
 * `first`, its complement for `last`, nothing for `member` and `shared`. The member id
 * follows, which makes the remaining ties fall back to the member id (docs/design/projection.md).
 * A board with a subscore (docs/design/projection.md) puts it first, as a fixed-width key (13 digits:
 * the subscore shifted by 2^40, complemented for `desc`), so equal scores order by
 * subscore before the tie rule; the score itself cannot hold it (two 41-bit numbers do
 * not fit a double exactly).
 */

export const TIE_BREAKS = ['first', 'last', 'member', 'shared'] as const;
export type TieBreak = (typeof TIE_BREAKS)[number];
export const SORT_ORDERS = ['desc', 'asc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

const TIME_WIDTH = 11;
const MAX_SECONDS = 10 ** TIME_WIDTH - 1;

/** A board's subscore ordering; null when it has none. */
export type SubscoreRule = { order: SortOrder } | null;

/** Width of the subscore key in front of an entry (2^41 has 13 digits). */
export const SUBSCORE_WIDTH = 13;
const SUBSCORE_SHIFT = 2n ** 40n;

export function encodeEntry(
  tieBreak: TieBreak,
  reachedSec: number,
  memberId: string,
  subscore: { rule: SubscoreRule; scaled: bigint } = { rule: null, scaled: 0n },
): string {
  return subscoreKey(subscore.rule, subscore.scaled) + tieKey(tieBreak, reachedSec) + memberId;
}

function tieKey(tieBreak: TieBreak, reachedSec: number): string {
  switch (tieBreak) {
    case 'first':
      return pad(reachedSec);
    case 'last':
      return pad(MAX_SECONDS - reachedSec);
    case 'member':
    case 'shared':
      return '';
  }
}

function subscoreKey(rule: SubscoreRule, scaled: bigint): string {
  if (!rule) return '';
  if (scaled > SUBSCORE_SHIFT || scaled < -SUBSCORE_SHIFT) throw new RangeError(`subscore out of range: ${scaled}`);
  return (rule.order === 'desc' ? SUBSCORE_SHIFT - scaled : scaled + SUBSCORE_SHIFT)
    .toString()
    .padStart(SUBSCORE_WIDTH, '0');
}

/** The sorted-set entry of an aggregate (reached second, subscore as the projection hands them). */
export function entryOfAggregate(
  board: { tieBreak: TieBreak; subscore: SubscoreRule },
  a: { reachedSec: number; member: string; subscore?: string },
): string {
  return encodeEntry(board.tieBreak, a.reachedSec, a.member, {
    rule: board.subscore,
    scaled: BigInt(a.subscore ?? '0'),
  });
}

/** The member id of an entry. */
export function decodeEntry(tieBreak: TieBreak, entry: string, rule: SubscoreRule = null): string {
  return entry.slice((rule ? SUBSCORE_WIDTH : 0) + (tieBreak === 'first' || tieBreak === 'last' ? TIME_WIDTH : 0));
}

/** The scaled subscore of an entry, or null on a board without one. */
export function subscoreOfEntry(rule: SubscoreRule, entry: string): number | null {
  if (!rule) return null;
  const key = BigInt(entry.slice(0, SUBSCORE_WIDTH));
  return Number(rule.order === 'desc' ? SUBSCORE_SHIFT - key : key - SUBSCORE_SHIFT);
}

/** The part of an entry that ranks: equal scores with equal rank keys share a rank under `shared`. */
export function rankKeyOfEntry(rule: SubscoreRule, entry: string): string {
  return rule ? entry.slice(0, SUBSCORE_WIDTH) : '';
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

/** A member's place in a scope as read: its total, and the member's rank and scaled score (null while unranked). */
export interface Placed {
  total: number;
  rank: number | null;
  scaled: number | null;
  /** Scaled; on boards with a subscore, for a ranked member only. */
  subscore?: number;
}

export function placement(rank: number, total: number): Placement {
  const percentile = rank / total;
  return { rank, total, percentile, topPercent: Math.max(1, Math.round(percentile * 100)) };
}
