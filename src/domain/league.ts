import type { League } from './board.js';

export type Zone = 'promote' | 'relegate' | null;

/**
 * Where the member at `place` (1-based, in bucket order) of `ranked` ranked members of a bucket
 * of `tier` stands (docs/design/leagues.md): the top `promote` move up, then the bottom `relegate` of those
 * not promoted move down; nobody moves past either end. (The close applies the same rule in
 * SQL, league-repository.ts closeLeague.)
 */
export function zoneOf(league: League, tier: string, place: number, ranked: number): Zone {
  const i = league.tiers.indexOf(tier);
  if (place <= league.promote) return i < league.tiers.length - 1 ? 'promote' : null;
  if (place > ranked - league.relegate) return i > 0 ? 'relegate' : null;
  return null;
}

/** `<tier>-<n>` into its tier, or null when it names no bucket of the league. */
export function parseBucket(league: League, bucket: string): string | null {
  const match = /^(.+)-([1-9]\d{0,8})$/.exec(bucket);
  return match && league.tiers.includes(match[1]!) ? match[1]! : null;
}
