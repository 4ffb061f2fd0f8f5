/**
 * Entrants of a maxMembers board (docs/design/leagues.md), as SQL spliced into laurel_apply_batch and into
 * the entrants repository (POST /v1/boards/{id}/entrants/{member}), so both follow one rule.
 *
 * Entries of one (board, period) are made one transaction at a time under this advisory lock,
 * taken after the member and period locks: each sees every earlier entry, and the positions
 * stay 1..n without gaps, so the count is the highest position.
 */
export const entrantsLockSql = (board: string, period: string): string =>
  `hashtextextended('entrants|' || ${board} || '|' || ${period}, 0)`;

/** How many members have entered the period: one backward probe of the primary key. */
export const entrantCountSql = (board: string, period: string): string =>
  `(SELECT coalesce(max(x.position), 0) FROM board_entrants x WHERE x.board_id = ${board} AND x.period_key = ${period})`;
