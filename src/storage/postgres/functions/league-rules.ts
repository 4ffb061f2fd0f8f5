/**
 * League placement (docs/design/leagues.md) as SQL spliced into laurel_apply_batch (at a member's first
 * applied event) and into the close of the previous period (members who waited for it), so
 * both place by one rule. Both run under the period's entries lock (entrant-rules.ts).
 */

/**
 * True when placement in the period starting at `startsAt` must wait: the board's previous
 * period has events and is not closed, so the tiers it decides are not known yet.
 */
export const placementWaitsSql = (board: string, startsAt: string): string => `EXISTS (
  SELECT 1 FROM (SELECT pp.key, pp.state FROM periods pp
                  WHERE pp.board_id = ${board} AND pp.starts_at < ${startsAt}
                  ORDER BY pp.starts_at DESC LIMIT 1) prev
   WHERE prev.state <> 'closed'
     AND EXISTS (SELECT 1 FROM member_aggregates a WHERE a.board_id = ${board} AND a.period_key = prev.key))`;

/**
 * Places the members of `firsts` (one row per member: board_id, period_key, member_id and their
 * first event's occurred_at and key) who have no place yet: each in their tier (the one earned
 * at the board's last close that placed them, else startTier), slots numbered on from the
 * tier's last, in the order of those first events; bucket `<tier>-<k>` holds bucketSize slots.
 */
export const placeMembersSql = (firsts: string, now: string): string => `
    INSERT INTO league_placements (board_id, period_key, member_id, tier, slot, bucket, placed_at)
    SELECT n.board_id, n.period_key, n.member_id, n.tier, s.top + n.r,
           n.tier || '-' || ((s.top + n.r - 1) / n.bucket_size + 1), ${now}
      FROM (SELECT f.board_id, f.period_key, f.member_id, f.tier, f.bucket_size,
                   row_number() OVER (PARTITION BY f.board_id, f.period_key, f.tier ORDER BY f.occurred_at, f.key COLLATE "C") AS r
              FROM (SELECT f0.board_id, f0.period_key, f0.member_id, f0.occurred_at, f0.key,
                           coalesce(t.tier, b.league->>'startTier') AS tier, (b.league->>'bucketSize')::int AS bucket_size
                      FROM ${firsts} f0
                      JOIN boards b ON b.id = f0.board_id
                      LEFT JOIN league_tiers t ON t.board_id = f0.board_id AND t.member_id = f0.member_id
                     WHERE NOT EXISTS (SELECT 1 FROM league_placements x
                                        WHERE x.board_id = f0.board_id AND x.period_key = f0.period_key AND x.member_id = f0.member_id)) f) n
      CROSS JOIN LATERAL (SELECT coalesce(max(x.slot), 0) AS top FROM league_placements x
                           WHERE x.board_id = n.board_id AND x.period_key = n.period_key AND x.tier = n.tier) s`;
