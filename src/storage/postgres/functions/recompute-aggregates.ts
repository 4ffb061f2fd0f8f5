import { rankedEvents, scopesOf, winnerColumns } from './aggregate-rules.js';
import type { StoredFunction } from './stored-function.js';

/**
 * Recomputes aggregates from the ledger (applied events only) with the rules of
 * laurel_apply_batch (aggregate-rules.ts), for one member of a period (p_member) or all of
 * them, in one category (p_category) or all. Bumps every touched version; returns how many
 * rows it wrote. Rows left without events keep their version and count as absent
 * (event_count = 0). The caller holds the member lock for one member; for a whole period the
 * period row is locked here, so batches for it wait instead of racing the recomputation.
 */
export const recomputeAggregates: StoredFunction = {
  name: 'laurel_recompute_aggregates',
  definition: `
CREATE OR REPLACE FUNCTION laurel_recompute_aggregates(p_board text, p_period text, p_member text, p_category text, p_now timestamptz)
RETURNS int
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_count int;
  v_from timestamptz;
  v_to timestamptz;
BEGIN
  -- An archived month's events are gone from the ledger: recomputing from what is left
  -- would silently shrink the stored aggregates. Closed periods keep their results.
  IF EXISTS (SELECT 1 FROM ledger_archived_periods WHERE board_id = p_board AND period_key = p_period) THEN
    RAISE EXCEPTION 'the events of period % of board % are archived; its stored aggregates and results stand', p_period, p_board
      USING ERRCODE = 'object_not_in_prerequisite_state';
  END IF;
  -- Routing puts every event inside its period's window, so the window prunes the ledger
  -- to the one or two monthly partitions that can hold the period.
  SELECT p.starts_at, coalesce(p.ends_at, 'infinity') INTO v_from, v_to
    FROM periods p WHERE p.board_id = p_board AND p.key = p_period;
  IF p_member IS NULL THEN
    PERFORM 1 FROM periods WHERE board_id = p_board AND key = p_period FOR UPDATE;
  END IF;
  WITH ev AS (
    SELECT e.member_id, k.cat, e.value, e.subscore, e.occurred_at, e.idempotency_key, b.aggregation, b.sort_order,
           b.subscore_order AS sub_order
      FROM score_events e
      JOIN boards b ON b.id = e.board_id
      ${scopesOf('e.category')}
     WHERE e.board_id = p_board AND e.period_key = p_period
       AND e.occurred_at >= v_from AND e.occurred_at < v_to
       AND (p_member IS NULL OR e.member_id = p_member)
       AND e.status = 'applied' AND k.cat IS NOT NULL
       AND (p_category IS NULL OR k.cat = p_category)
  ),
  ranked AS (${rankedEvents('ev', 'x.cat, x.member_id')}
  ),
  fresh AS (
    SELECT r.cat, r.member_id,
           ${winnerColumns('r')}
      FROM ranked r WHERE r.rn = 1
  ),
  existing AS (
    SELECT a.category AS cat, a.member_id FROM member_aggregates a
     WHERE a.board_id = p_board AND a.period_key = p_period AND (p_member IS NULL OR a.member_id = p_member)
       AND (p_category IS NULL OR a.category = p_category)
  ),
  target AS (
    SELECT coalesce(f.cat, x.cat) AS cat, coalesce(f.member_id, x.member_id) AS member_id,
           coalesce(f.value, 0) AS value, coalesce(f.subscore, 0) AS subscore, coalesce(f.reached_at, '-infinity'::timestamptz) AS reached_at,
           coalesce(f.last_key, '') AS last_key, coalesce(f.n, 0) AS n
      FROM fresh f FULL JOIN existing x ON x.cat = f.cat AND x.member_id = f.member_id
  ),
  written AS (
    INSERT INTO member_aggregates AS a (board_id, period_key, category, member_id, value, subscore, reached_at, last_key, event_count, region, updated_at)
    SELECT p_board, p_period, t.cat, t.member_id, t.value, t.subscore, t.reached_at, t.last_key, t.n, m.region, p_now
      FROM target t JOIN members m ON m.id = t.member_id
     ORDER BY t.cat, t.member_id
    ON CONFLICT (board_id, period_key, category, member_id) DO UPDATE SET
      value = excluded.value,
      subscore = excluded.subscore,
      reached_at = excluded.reached_at,
      last_key = excluded.last_key,
      event_count = excluded.event_count,
      version = a.version + 1,
      updated_at = excluded.updated_at
    RETURNING 1
  )
  SELECT count(*) INTO v_count FROM written;
  RETURN v_count;
END
$fn$`,
};
