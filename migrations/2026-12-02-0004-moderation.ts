import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE member_exclusions (
      id bigserial PRIMARY KEY,
      member_id text COLLATE "C" NOT NULL REFERENCES members (id),
      reason text NOT NULL,
      excluded_by text NOT NULL,
      excluded_at timestamptz NOT NULL,
      restored_by text,
      restored_at timestamptz
    )`.execute(db);
  await sql`CREATE INDEX member_exclusions_member_idx ON member_exclusions (member_id, id)`.execute(db);
  await sql`CREATE INDEX score_events_member_only_idx ON score_events (member_id)`.execute(db);
  await sql`CREATE INDEX member_aggregates_member_idx ON member_aggregates (member_id)`.execute(db);

  // Recomputes aggregates from the ledger (applied events only) with the same rules as
  // laurel_apply_batch, for one member of a period (p_member) or all of them, in one
  // category (p_category) or all. Bumps every touched version; returns how many rows it wrote.
  // Rows left without events keep their version and count as absent (event_count = 0).
  // The caller holds the member lock for one member; for a whole period the period row is
  // locked here, so batches for it wait instead of racing the recomputation.
  await sql`
CREATE FUNCTION laurel_recompute_aggregates(p_board text, p_period text, p_member text, p_category text, p_now timestamptz)
RETURNS int
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_count int;
BEGIN
  IF p_member IS NULL THEN
    PERFORM 1 FROM periods WHERE board_id = p_board AND key = p_period FOR UPDATE;
  END IF;
  WITH ev AS (
    SELECT e.member_id, k.cat, e.value, e.occurred_at, e.idempotency_key, b.aggregation, b.sort_order
      FROM score_events e
      JOIN boards b ON b.id = e.board_id
      CROSS JOIN LATERAL (VALUES ('all'::text), (e.category)) AS k(cat)
     WHERE e.board_id = p_board AND e.period_key = p_period
       AND (p_member IS NULL OR e.member_id = p_member)
       AND e.status = 'applied' AND k.cat IS NOT NULL
       AND (p_category IS NULL OR k.cat = p_category)
  ),
  ranked AS (
    SELECT x.*,
           row_number() OVER w AS rn,
           sum(x.value) OVER p AS total,
           max(x.occurred_at) OVER p AS latest,
           count(*) OVER p AS n
      FROM ev x
    WINDOW p AS (PARTITION BY x.cat, x.member_id),
           w AS (PARTITION BY x.cat, x.member_id
                 ORDER BY CASE WHEN x.aggregation = 'best' THEN CASE WHEN x.sort_order = 'desc' THEN -x.value ELSE x.value END END,
                          CASE WHEN x.aggregation = 'best' THEN x.occurred_at END,
                          x.occurred_at DESC, x.idempotency_key DESC)
  ),
  fresh AS (
    SELECT r.cat, r.member_id,
           (CASE WHEN r.aggregation = 'sum' THEN r.total ELSE r.value END)::bigint AS value,
           CASE WHEN r.aggregation = 'sum' THEN r.latest ELSE r.occurred_at END AS reached_at,
           r.idempotency_key AS last_key, r.n::int AS n
      FROM ranked r WHERE r.rn = 1
  ),
  existing AS (
    SELECT a.category AS cat, a.member_id FROM member_aggregates a
     WHERE a.board_id = p_board AND a.period_key = p_period AND (p_member IS NULL OR a.member_id = p_member)
       AND (p_category IS NULL OR a.category = p_category)
  ),
  target AS (
    SELECT coalesce(f.cat, x.cat) AS cat, coalesce(f.member_id, x.member_id) AS member_id,
           coalesce(f.value, 0) AS value, coalesce(f.reached_at, '-infinity'::timestamptz) AS reached_at,
           coalesce(f.last_key, '') AS last_key, coalesce(f.n, 0) AS n
      FROM fresh f FULL JOIN existing x ON x.cat = f.cat AND x.member_id = f.member_id
  ),
  written AS (
    INSERT INTO member_aggregates AS a (board_id, period_key, category, member_id, value, reached_at, last_key, event_count, region, updated_at)
    SELECT p_board, p_period, t.cat, t.member_id, t.value, t.reached_at, t.last_key, t.n, m.region, p_now
      FROM target t JOIN members m ON m.id = t.member_id
     ORDER BY t.cat, t.member_id
    ON CONFLICT (board_id, period_key, category, member_id) DO UPDATE SET
      value = excluded.value,
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
$fn$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION laurel_recompute_aggregates(text, text, text, text, timestamptz)`.execute(db);
  await sql`DROP INDEX member_aggregates_member_idx`.execute(db);
  await sql`DROP INDEX score_events_member_only_idx`.execute(db);
  await sql`DROP TABLE member_exclusions`.execute(db);
}
