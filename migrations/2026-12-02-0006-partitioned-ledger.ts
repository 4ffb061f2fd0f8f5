import { sql, type Kysely } from 'kysely';

/**
 * The ledger (score_events) becomes a table partitioned by month of occurred_at (UTC), so
 * old months can be detached and archived while the ledger stays one table for every query.
 *
 * - Idempotency stays global: a partitioned table can only enforce uniqueness within a
 *   partition, so the keys move to score_event_keys, an unpartitioned table that
 *   laurel_apply_batch claims in the same transaction as the insert. It also carries what
 *   classifying a repeat needs (hash, where the key counts), so a duplicate never touches
 *   the ledger, and it outlives archiving: a key seen once stays a duplicate forever.
 * - No event waits for a partition: score_events_default takes what no monthly partition
 *   covers; laurel_ensure_ledger_partition creates a month's partition and moves the rows
 *   of that month out of the default partition in one transaction.
 * - ledger_archives / ledger_archived_periods record what the archive command detached.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Kept so that down() can put back the versions this migration replaces.
  await sql`CREATE TABLE laurel_superseded_functions (name text PRIMARY KEY, definition text NOT NULL)`.execute(db);
  await sql`
    INSERT INTO laurel_superseded_functions (name, definition)
    SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p
     WHERE p.proname IN ('laurel_apply_batch', 'laurel_recompute_aggregates')
       AND p.pronamespace = current_schema()::regnamespace`.execute(db);

  await sql`
    CREATE TABLE score_event_keys (
      idempotency_key text COLLATE "C" PRIMARY KEY,
      payload_hash text NOT NULL,
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      category text COLLATE "C",
      -- Where the event sits in the ledger: lookups by key prune to its one partition.
      occurred_at timestamptz NOT NULL
    )`.execute(db);

  await sql`ALTER TABLE score_events RENAME TO score_events_unpartitioned`.execute(db);
  await sql`ALTER SEQUENCE score_events_id_seq OWNED BY NONE`.execute(db);
  await sql`
    CREATE TABLE score_events (
      id bigint NOT NULL DEFAULT nextval('score_events_id_seq'),
      idempotency_key text COLLATE "C" NOT NULL,
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      category text COLLATE "C",
      value bigint NOT NULL,
      occurred_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL,
      applied_at timestamptz NOT NULL,
      source text,
      payload_hash text NOT NULL,
      status text NOT NULL DEFAULT 'applied' CONSTRAINT score_events_status_check CHECK (status IN ('applied', 'voided')),
      void_reason text,
      voided_at timestamptz,
      metadata jsonb
    ) PARTITION BY RANGE (occurred_at)`.execute(db);
  await sql`ALTER SEQUENCE score_events_id_seq OWNED BY score_events.id`.execute(db);
  await sql`CREATE TABLE score_events_default PARTITION OF score_events DEFAULT`.execute(db);

  await sql`
CREATE FUNCTION laurel_ensure_ledger_partition(p_month date)
RETURNS boolean
LANGUAGE plpgsql
AS $fn$
DECLARE
  v_month date := date_trunc('month', p_month)::date;
  v_name text := 'score_events_' || to_char(date_trunc('month', p_month), '"p"YYYY_MM');
  v_from timestamptz := date_trunc('month', p_month)::timestamp AT TIME ZONE 'UTC';
  v_to timestamptz := (date_trunc('month', p_month) + interval '1 month')::timestamp AT TIME ZONE 'UTC';
BEGIN
  -- One maintainer at a time (ticks on several workers, the archive command).
  PERFORM pg_advisory_xact_lock(hashtext('laurel_ledger_partitions'));
  IF EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
              WHERE i.inhparent = 'score_events'::regclass AND c.relname = v_name) THEN
    RETURN false;
  END IF;
  -- Inserts routed to the default partition wait until the month's rows have moved and the
  -- new partition is attached; inserts into other partitions go on (ATTACH takes only
  -- SHARE UPDATE EXCLUSIVE on score_events, where CREATE TABLE ... PARTITION OF would
  -- take ACCESS EXCLUSIVE and stop every batch).
  LOCK TABLE score_events_default IN ACCESS EXCLUSIVE MODE;
  EXECUTE format('CREATE TABLE %I (LIKE score_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', v_name);
  -- The bound as a constraint lets ATTACH skip its validation scan.
  EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (occurred_at >= %L AND occurred_at < %L)', v_name, v_name || '_bounds', v_from, v_to);
  EXECUTE format('WITH moved AS (DELETE FROM score_events_default WHERE occurred_at >= $1 AND occurred_at < $2 RETURNING *)
                  INSERT INTO %I SELECT * FROM moved', v_name) USING v_from, v_to;
  EXECUTE format('ALTER TABLE score_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', v_name, v_from, v_to);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', v_name, v_name || '_bounds');
  RETURN true;
END
$fn$`.execute(db);

  // A partition for every month that has events, and for this month and the next three.
  await sql`
    SELECT laurel_ensure_ledger_partition(m::date)
      FROM (SELECT DISTINCT date_trunc('month', occurred_at AT TIME ZONE 'UTC') AS m FROM score_events_unpartitioned
            UNION
            SELECT generate_series(date_trunc('month', now() AT TIME ZONE 'UTC'),
                                   date_trunc('month', now() AT TIME ZONE 'UTC') + interval '3 months', interval '1 month')) months
     ORDER BY m`.execute(db);

  const columns = sql.raw(`id, idempotency_key, board_id, period_key, member_id, category, value, occurred_at, received_at,
    applied_at, source, payload_hash, status, void_reason, voided_at, metadata`);
  await sql`INSERT INTO score_events (${columns}) SELECT ${columns} FROM score_events_unpartitioned`.execute(db);
  await sql`
    INSERT INTO score_event_keys (idempotency_key, payload_hash, board_id, period_key, member_id, category, occurred_at)
    SELECT idempotency_key, payload_hash, board_id, period_key, member_id, category, occurred_at FROM score_events_unpartitioned`.execute(db);
  await sql`DROP TABLE score_events_unpartitioned`.execute(db);

  // Indexes after the copy (faster), with the old names now that those are free. Unique
  // indexes of a partitioned table must hold the partition key: the key table is the one
  // that is unique on the idempotency key alone.
  await sql`ALTER TABLE score_events ADD PRIMARY KEY (occurred_at, id)`.execute(db);
  await sql`ALTER TABLE score_events ADD FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)`.execute(db);
  await sql`CREATE INDEX score_events_key_idx ON score_events (idempotency_key)`.execute(db);
  await sql`CREATE INDEX score_events_member_idx ON score_events (board_id, period_key, member_id)`.execute(db);
  await sql`CREATE INDEX score_events_member_only_idx ON score_events (member_id)`.execute(db);
  await sql`CREATE INDEX score_events_applied_idx ON score_events (applied_at)`.execute(db);

  await sql`CREATE SCHEMA ledger_archive`.execute(db);
  // One row per archived month: detached (table kept in schema ledger_archive), counted,
  // written to a file, dropped. The archive command resumes from whatever step a row records.
  await sql`
    CREATE TABLE ledger_archives (
      month date PRIMARY KEY,
      archive_table text NOT NULL,
      -- Null until the detached table is counted and its periods recorded.
      events bigint,
      detached_at timestamptz NOT NULL,
      file text,
      file_written_at timestamptz,
      dropped_at timestamptz
    )`.execute(db);
  // The periods whose events left the ledger with an archived month: their aggregates cannot
  // be recomputed from events any more (laurel_recompute_aggregates refuses).
  await sql`
    CREATE TABLE ledger_archived_periods (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      month date NOT NULL REFERENCES ledger_archives (month),
      events bigint NOT NULL,
      PRIMARY KEY (board_id, period_key, month),
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    )`.execute(db);

  await sql`
CREATE OR REPLACE FUNCTION laurel_apply_batch(p_events jsonb, p_boards jsonb, p_now timestamptz)
RETURNS jsonb
LANGUAGE plpgsql
-- Every lookup here is by key for at most a batch of rows. Planner statistics of a young or
-- fast-growing table can make a full scan look cheap, and a scan per batch would make apply
-- time grow with the ledger; keys are always indexed, so never scan.
SET enable_seqscan = off
AS $fn$
DECLARE
  v_stale jsonb;
  v_classified jsonb;
  v_overflow text[];
  v_inserted jsonb;
  v_final jsonb;
  v_aggregates jsonb;
  v_created jsonb;
  v_claimed jsonb;
BEGIN
  -- Routing (period, scale) was computed from a board revision: lock the boards so it
  -- cannot change under the batch, and ask for a redo if it already has.
  PERFORM 1 FROM boards b
   WHERE b.id IN (SELECT x.id FROM jsonb_to_recordset(p_boards) AS x(id text))
   ORDER BY b.id
     FOR SHARE;
  SELECT coalesce(jsonb_agg(x.id), '[]'::jsonb) INTO v_stale
    FROM jsonb_to_recordset(p_boards) AS x(id text, revision int)
    LEFT JOIN boards b ON b.id = x.id
   WHERE b.id IS NULL OR b.revision <> x.revision;
  IF jsonb_array_length(v_stale) > 0 THEN
    RETURN jsonb_build_object('stale', v_stale);
  END IF;

  INSERT INTO members (id)
  SELECT DISTINCT e.member_id FROM jsonb_to_recordset(p_events) AS e(member_id text)
   ORDER BY 1
  ON CONFLICT DO NOTHING;
  -- Region changes, exclusions and voids lock the member FOR UPDATE: they wait for this
  -- batch and it for them, so no batch projects a region or exclusion flag that is stale.
  PERFORM 1 FROM members m
   WHERE m.id IN (SELECT e.member_id FROM jsonb_to_recordset(p_events) AS e(member_id text))
   ORDER BY m.id
     FOR SHARE;

  -- Classification, first pass: a key repeated inside the batch is decided by its first
  -- copy (see the final pass); a key already in the ledger is a duplicate or a conflict;
  -- what is left is a candidate, pending its period.
  WITH ev AS (
    SELECT e.*
      FROM jsonb_to_recordset(p_events) AS e(
        ord int, key text, board_id text, period_key text, starts_at timestamptz, ends_at timestamptz,
        member_id text, category text, value bigint, occurred_at timestamptz, received_at timestamptz,
        source text, payload_hash text, metadata jsonb, payload jsonb, pre_reason text)
  ),
  firsts AS (
    SELECT DISTINCT ON (ev.key) ev.key, ev.ord FROM ev ORDER BY ev.key, ev.ord
  )
  SELECT coalesce(jsonb_agg(to_jsonb(c)), '[]'::jsonb) INTO v_classified
    FROM (
      SELECT ev.*,
             CASE
               WHEN f.ord <> ev.ord THEN 'repeat'
               WHEN se.payload_hash IS NOT NULL THEN CASE WHEN se.payload_hash = ev.payload_hash THEN 'duplicate' ELSE 'conflict' END
               WHEN ev.pre_reason IS NOT NULL THEN ev.pre_reason
               WHEN ev.ends_at IS NOT NULL AND ev.received_at > ev.ends_at + make_interval(secs => b.grace_seconds) THEN 'period_closed'
               ELSE 'candidate'
             END AS verdict
        FROM ev
        JOIN firsts f ON f.key = ev.key
        JOIN boards b ON b.id = ev.board_id
        LEFT JOIN score_event_keys se ON se.idempotency_key = ev.key
    ) c;

  -- A period is created only by an event that can still count in it: never by a late,
  -- duplicate or refused one. The caller learns which periods it created: Redis holds all
  -- of such a period by construction.
  WITH created AS (
    INSERT INTO periods (board_id, key, starts_at, ends_at, state)
    SELECT DISTINCT c.board_id, c.period_key, c.starts_at, c.ends_at, 'open'
      FROM jsonb_to_recordset(v_classified)
           AS c(board_id text, period_key text, starts_at timestamptz, ends_at timestamptz, verdict text)
     WHERE c.verdict = 'candidate'
     ORDER BY 1, 2
    ON CONFLICT DO NOTHING
    RETURNING board_id, key
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object('board', c.board_id, 'period', c.key)), '[]'::jsonb) INTO v_created FROM created c;

  -- Closing takes these rows FOR UPDATE, so it waits for batches in flight and they for it.
  PERFORM 1 FROM periods p
   WHERE (p.board_id, p.key) IN (
           SELECT c.board_id, c.period_key FROM jsonb_to_recordset(v_classified) AS c(board_id text, period_key text, verdict text)
            WHERE c.verdict = 'candidate')
   ORDER BY p.board_id, p.key
     FOR SHARE;

  -- Second pass: a candidate counts only in a period that is still open.
  SELECT coalesce(jsonb_agg(
           CASE WHEN c->>'verdict' <> 'candidate' THEN c
                WHEN p.state = 'open' THEN jsonb_set(c, '{verdict}', '"fresh"')
                ELSE jsonb_set(c, '{verdict}', '"period_closed"') END), '[]'::jsonb)
    INTO v_classified
    FROM jsonb_array_elements(v_classified) AS c
    LEFT JOIN periods p ON p.board_id = c->>'board_id' AND p.key = c->>'period_key';

  -- Sums: lock the member's current rows and refuse the batch's events of any member whose
  -- total would leave the exact range. (The CHECK on member_aggregates is the last guard.)
  WITH fresh AS (
    SELECT c.* FROM jsonb_to_recordset(v_classified)
                    AS c(board_id text, period_key text, member_id text, category text, value bigint, verdict text)
     WHERE c.verdict = 'fresh'
  ),
  contrib AS (
    SELECT f.board_id, f.period_key, k.cat, f.member_id, sum(f.value) AS s
      FROM fresh f
      JOIN boards b ON b.id = f.board_id AND b.aggregation = 'sum'
      CROSS JOIN LATERAL (VALUES ('all'::text), (f.category)) AS k(cat)
     WHERE k.cat IS NOT NULL
     GROUP BY 1, 2, 3, 4
  ),
  cur AS (
    SELECT a.board_id, a.period_key, a.category, a.member_id, a.value
      FROM member_aggregates a
      JOIN contrib c ON a.board_id = c.board_id AND a.period_key = c.period_key
                    AND a.category = c.cat AND a.member_id = c.member_id
     ORDER BY 1, 2, 3, 4
       FOR UPDATE OF a
  )
  SELECT coalesce(array_agg(DISTINCT c.board_id || '|' || c.period_key || '|' || c.member_id), '{}') INTO v_overflow
    FROM contrib c
    LEFT JOIN cur ON cur.board_id = c.board_id AND cur.period_key = c.period_key
                 AND cur.category = c.cat AND cur.member_id = c.member_id
   WHERE abs(coalesce(cur.value, 0) + c.s) > 1099511627776;

  IF cardinality(v_overflow) > 0 THEN
    SELECT jsonb_agg(
             CASE WHEN c->>'verdict' = 'fresh'
                   AND (c->>'board_id') || '|' || (c->>'period_key') || '|' || (c->>'member_id') = ANY (v_overflow)
                  THEN jsonb_set(c, '{verdict}', '"out_of_range"')
                  ELSE c END)
      INTO v_classified
      FROM jsonb_array_elements(v_classified) AS c;
  END IF;

  -- The key table is the one global arbiter of idempotency: a key is claimed here (a
  -- concurrent batch holding it makes this wait, then skip it), and only claimed keys enter
  -- the ledger, whichever monthly partition their occurred_at routes them to.
  WITH claimed AS (
    INSERT INTO score_event_keys (idempotency_key, payload_hash, board_id, period_key, member_id, category, occurred_at)
    SELECT c.key, c.payload_hash, c.board_id, c.period_key, c.member_id, c.category, c.occurred_at
      FROM jsonb_to_recordset(v_classified)
           AS c(key text, payload_hash text, board_id text, period_key text, member_id text, category text,
                occurred_at timestamptz, verdict text)
     WHERE c.verdict = 'fresh'
     ORDER BY c.key COLLATE "C"
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING idempotency_key
  )
  -- An object, not a join: its lookups stay logarithmic whatever the planner guesses of the sizes.
  SELECT coalesce(jsonb_object_agg(k.idempotency_key, true), '{}'::jsonb) INTO v_claimed FROM claimed k;

  WITH fresh AS (
    SELECT c.* FROM jsonb_to_recordset(v_classified)
                    AS c(key text, board_id text, period_key text, member_id text, category text, value bigint,
                         occurred_at timestamptz, received_at timestamptz, source text, payload_hash text,
                         metadata jsonb, verdict text)
     WHERE c.verdict = 'fresh'
  ),
  ins AS (
    INSERT INTO score_events (idempotency_key, board_id, period_key, member_id, category, value, occurred_at,
                              received_at, applied_at, source, payload_hash, metadata)
    SELECT f.key, f.board_id, f.period_key, f.member_id, f.category, f.value, f.occurred_at,
           f.received_at, p_now, f.source, f.payload_hash, f.metadata
      FROM fresh f
     WHERE v_claimed ? f.key
    RETURNING idempotency_key, board_id, period_key, member_id, category, value, occurred_at
  ),
  expanded AS (
    SELECT i.*, k.cat, b.aggregation, b.sort_order
      FROM ins i
      JOIN boards b ON b.id = i.board_id
      CROSS JOIN LATERAL (VALUES ('all'::text), (i.category)) AS k(cat)
     WHERE k.cat IS NOT NULL
  ),
  ranked AS (
    SELECT x.*,
           row_number() OVER w AS rn,
           sum(x.value) OVER p AS total,
           max(x.occurred_at) OVER p AS latest,
           count(*) OVER p AS n
      FROM expanded x
    WINDOW p AS (PARTITION BY x.board_id, x.period_key, x.cat, x.member_id),
           w AS (PARTITION BY x.board_id, x.period_key, x.cat, x.member_id
                 ORDER BY CASE WHEN x.aggregation = 'best' THEN CASE WHEN x.sort_order = 'desc' THEN -x.value ELSE x.value END END,
                          CASE WHEN x.aggregation = 'best' THEN x.occurred_at END,
                          x.occurred_at DESC, x.idempotency_key DESC)
  ),
  contrib AS (
    SELECT r.board_id, r.period_key, r.cat, r.member_id, r.aggregation, r.sort_order,
           (CASE WHEN r.aggregation = 'sum' THEN r.total ELSE r.value END)::bigint AS value,
           CASE WHEN r.aggregation = 'sum' THEN r.latest ELSE r.occurred_at END AS reached_at,
           r.idempotency_key AS last_key, r.n::int AS n, m.region
      FROM ranked r
      JOIN members m ON m.id = r.member_id
     WHERE r.rn = 1
  ),
  up_sum AS (
    INSERT INTO member_aggregates AS a (board_id, period_key, category, member_id, value, reached_at, last_key, event_count, region, updated_at)
    SELECT c.board_id, c.period_key, c.cat, c.member_id, c.value, c.reached_at, c.last_key, c.n, c.region, p_now
      FROM contrib c WHERE c.aggregation = 'sum'
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (board_id, period_key, category, member_id) DO UPDATE SET
      value = a.value + excluded.value,
      reached_at = greatest(a.reached_at, excluded.reached_at),
      last_key = CASE WHEN (excluded.reached_at, excluded.last_key) > (a.reached_at, a.last_key) THEN excluded.last_key ELSE a.last_key END,
      event_count = a.event_count + excluded.event_count,
      region = excluded.region,
      version = a.version + 1,
      updated_at = excluded.updated_at
    RETURNING 1
  ),
  up_best_desc AS (
    INSERT INTO member_aggregates AS a (board_id, period_key, category, member_id, value, reached_at, last_key, event_count, region, updated_at)
    SELECT c.board_id, c.period_key, c.cat, c.member_id, c.value, c.reached_at, c.last_key, c.n, c.region, p_now
      FROM contrib c WHERE c.aggregation = 'best' AND c.sort_order = 'desc'
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (board_id, period_key, category, member_id) DO UPDATE SET
      value = CASE WHEN a.event_count = 0 THEN excluded.value ELSE greatest(a.value, excluded.value) END,
      reached_at = CASE WHEN a.event_count = 0 OR excluded.value > a.value THEN excluded.reached_at
                        WHEN excluded.value < a.value THEN a.reached_at
                        ELSE least(a.reached_at, excluded.reached_at) END,
      last_key = CASE WHEN a.event_count = 0 OR excluded.value > a.value
                        OR (excluded.value = a.value AND excluded.reached_at < a.reached_at)
                      THEN excluded.last_key ELSE a.last_key END,
      event_count = a.event_count + excluded.event_count,
      region = excluded.region,
      version = a.version + 1,
      updated_at = excluded.updated_at
    RETURNING 1
  ),
  up_best_asc AS (
    INSERT INTO member_aggregates AS a (board_id, period_key, category, member_id, value, reached_at, last_key, event_count, region, updated_at)
    SELECT c.board_id, c.period_key, c.cat, c.member_id, c.value, c.reached_at, c.last_key, c.n, c.region, p_now
      FROM contrib c WHERE c.aggregation = 'best' AND c.sort_order = 'asc'
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (board_id, period_key, category, member_id) DO UPDATE SET
      value = CASE WHEN a.event_count = 0 THEN excluded.value ELSE least(a.value, excluded.value) END,
      reached_at = CASE WHEN a.event_count = 0 OR excluded.value < a.value THEN excluded.reached_at
                        WHEN excluded.value > a.value THEN a.reached_at
                        ELSE least(a.reached_at, excluded.reached_at) END,
      last_key = CASE WHEN a.event_count = 0 OR excluded.value < a.value
                        OR (excluded.value = a.value AND excluded.reached_at < a.reached_at)
                      THEN excluded.last_key ELSE a.last_key END,
      event_count = a.event_count + excluded.event_count,
      region = excluded.region,
      version = a.version + 1,
      updated_at = excluded.updated_at
    RETURNING 1
  ),
  up_last AS (
    INSERT INTO member_aggregates AS a (board_id, period_key, category, member_id, value, reached_at, last_key, event_count, region, updated_at)
    SELECT c.board_id, c.period_key, c.cat, c.member_id, c.value, c.reached_at, c.last_key, c.n, c.region, p_now
      FROM contrib c WHERE c.aggregation = 'last'
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (board_id, period_key, category, member_id) DO UPDATE SET
      value = CASE WHEN (excluded.reached_at, excluded.last_key) > (a.reached_at, a.last_key) THEN excluded.value ELSE a.value END,
      reached_at = greatest(a.reached_at, excluded.reached_at),
      last_key = CASE WHEN (excluded.reached_at, excluded.last_key) > (a.reached_at, a.last_key) THEN excluded.last_key ELSE a.last_key END,
      event_count = a.event_count + excluded.event_count,
      region = excluded.region,
      version = a.version + 1,
      updated_at = excluded.updated_at
    RETURNING 1
  )
  SELECT coalesce(jsonb_agg(ins.idempotency_key), '[]'::jsonb) INTO v_inserted FROM ins;

  -- Final pass. An event classified fresh may still have lost a race with a concurrent
  -- batch holding the same key: it is then a duplicate or a conflict of the row that won.
  -- A key repeated in the batch shares its first copy's fate (a duplicate of it when that
  -- copy counts), or is a conflict when its payload differs.
  WITH c AS (
    SELECT x.* FROM jsonb_to_recordset(v_classified)
                    AS x(ord int, key text, board_id text, period_key text, member_id text, payload jsonb,
                         payload_hash text, source text, received_at timestamptz, verdict text)
  ),
  decided AS (
    SELECT c.*,
           CASE
             WHEN c.verdict <> 'fresh' THEN c.verdict
             WHEN v_inserted ? c.key THEN 'applied'
             WHEN se.payload_hash = c.payload_hash THEN 'duplicate'
             ELSE 'conflict'
           END AS outcome,
           se.board_id AS s_board, se.period_key AS s_period, se.member_id AS s_member, se.category AS s_category
      FROM c LEFT JOIN score_event_keys se ON se.idempotency_key = c.key
     WHERE c.verdict <> 'repeat'
  ),
  everything AS (
    SELECT d.ord, d.key, d.board_id, d.period_key, d.member_id, d.payload, d.payload_hash, d.source, d.received_at,
           d.outcome, d.s_board, d.s_period, d.s_member, d.s_category
      FROM decided d
    UNION ALL
    SELECT r.ord, r.key, r.board_id, r.period_key, r.member_id, r.payload, r.payload_hash, r.source, r.received_at,
           CASE WHEN r.payload_hash <> d.payload_hash THEN 'conflict'
                WHEN d.outcome IN ('applied', 'duplicate') THEN 'duplicate'
                ELSE d.outcome END,
           d.s_board, d.s_period, d.s_member, d.s_category
      FROM c r JOIN decided d ON d.key = r.key
     WHERE r.verdict = 'repeat'
  )
  SELECT coalesce(jsonb_agg(jsonb_build_object(
           'ord', e.ord, 'key', e.key, 'board_id', e.board_id, 'period_key', e.period_key,
           'member_id', e.member_id, 'payload', e.payload, 'payload_hash', e.payload_hash,
           'source', e.source, 'received_at', e.received_at, 'outcome', e.outcome,
           -- Where the key counts: only for events that count.
           'stored_board', CASE WHEN e.outcome IN ('applied', 'duplicate') THEN e.s_board END,
           'stored_period', CASE WHEN e.outcome IN ('applied', 'duplicate') THEN e.s_period END,
           'stored_member', CASE WHEN e.outcome IN ('applied', 'duplicate') THEN e.s_member END,
           'stored_category', CASE WHEN e.outcome IN ('applied', 'duplicate') THEN e.s_category END)), '[]'::jsonb)
    INTO v_final
    FROM everything e;

  INSERT INTO rejections (idempotency_key, reason, board_id, period_key, member_id, payload, payload_hash, source, received_at, rejected_at)
  SELECT f.key, f.outcome, f.board_id, f.period_key, f.member_id, f.payload, f.payload_hash, f.source, f.received_at, p_now
    FROM jsonb_to_recordset(v_final)
         AS f(key text, outcome text, board_id text, period_key text, member_id text, payload jsonb,
              payload_hash text, source text, received_at timestamptz)
   WHERE f.outcome IN ('conflict', 'period_closed', 'out_of_range')
  ON CONFLICT DO NOTHING;

  -- Duplicates are not rejections, but rollups count them (insert-only: no hot row).
  INSERT INTO duplicate_log (board_id, period_key, at, duplicates)
  SELECT f.stored_board, f.stored_period, p_now, count(*)
    FROM jsonb_to_recordset(v_final) AS f(outcome text, stored_board text, stored_period text)
   WHERE f.outcome = 'duplicate'
   GROUP BY 1, 2;

  -- Every aggregate the batch touched, duplicates included: a retried job re-projects what
  -- an earlier attempt committed but never wrote to Redis.
  SELECT coalesce(jsonb_agg(laurel_aggregate_json(a, b.regions, m.excluded_at IS NOT NULL)), '[]'::jsonb)
    INTO v_aggregates
    FROM (SELECT DISTINCT f.stored_board, f.stored_period, k.cat, f.stored_member
            FROM jsonb_to_recordset(v_final)
                 AS f(outcome text, stored_board text, stored_period text, stored_member text, stored_category text)
            CROSS JOIN LATERAL (VALUES ('all'::text), (f.stored_category)) AS k(cat)
           WHERE f.outcome IN ('applied', 'duplicate') AND k.cat IS NOT NULL) t
    JOIN member_aggregates a ON a.board_id = t.stored_board AND a.period_key = t.stored_period
                            AND a.category = t.cat AND a.member_id = t.stored_member
    JOIN boards b ON b.id = a.board_id
    JOIN members m ON m.id = a.member_id;

  RETURN jsonb_build_object(
    'results', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                  'ord', f.ord, 'key', f.key, 'outcome', f.outcome,
                  'board', coalesce(f.stored_board, f.board_id), 'period', coalesce(f.stored_period, f.period_key),
                  'member', coalesce(f.stored_member, f.member_id))), '[]'::jsonb)
                  FROM jsonb_to_recordset(v_final)
                       AS f(ord int, key text, outcome text, board_id text, period_key text, member_id text,
                            stored_board text, stored_period text, stored_member text)),
    'aggregates', v_aggregates,
    'createdPeriods', v_created);
END
$fn$`.execute(db);

  await sql`
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
    SELECT e.member_id, k.cat, e.value, e.occurred_at, e.idempotency_key, b.aggregation, b.sort_order
      FROM score_events e
      JOIN boards b ON b.id = e.board_id
      CROSS JOIN LATERAL (VALUES ('all'::text), (e.category)) AS k(cat)
     WHERE e.board_id = p_board AND e.period_key = p_period
       AND e.occurred_at >= v_from AND e.occurred_at < v_to
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
  // Archived months are not brought back: restore them from their files first if needed.
  await sql`ALTER TABLE score_events RENAME TO score_events_partitioned`.execute(db);
  await sql`ALTER SEQUENCE score_events_id_seq OWNED BY NONE`.execute(db);
  await sql`ALTER TABLE score_events_partitioned DROP CONSTRAINT score_events_pkey`.execute(db);
  for (const index of ['score_events_key_idx', 'score_events_member_idx', 'score_events_member_only_idx', 'score_events_applied_idx']) {
    await sql`DROP INDEX ${sql.ref(index)}`.execute(db);
  }
  await sql`
    CREATE TABLE score_events (
      id bigint PRIMARY KEY DEFAULT nextval('score_events_id_seq'),
      idempotency_key text COLLATE "C" NOT NULL UNIQUE,
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      category text COLLATE "C",
      value bigint NOT NULL,
      occurred_at timestamptz NOT NULL,
      received_at timestamptz NOT NULL,
      applied_at timestamptz NOT NULL,
      source text,
      payload_hash text NOT NULL,
      status text NOT NULL DEFAULT 'applied' CHECK (status IN ('applied', 'voided')),
      void_reason text,
      voided_at timestamptz,
      metadata jsonb,
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    )`.execute(db);
  await sql`INSERT INTO score_events SELECT * FROM score_events_partitioned`.execute(db);
  await sql`ALTER SEQUENCE score_events_id_seq OWNED BY score_events.id`.execute(db);
  await sql`DROP TABLE score_events_partitioned`.execute(db);
  await sql`CREATE INDEX score_events_member_idx ON score_events (board_id, period_key, member_id)`.execute(db);
  await sql`CREATE INDEX score_events_member_only_idx ON score_events (member_id)`.execute(db);
  await sql`CREATE INDEX score_events_applied_idx ON score_events (applied_at)`.execute(db);
  const { rows } = await sql<{ definition: string }>`SELECT definition FROM laurel_superseded_functions`.execute(db);
  for (const r of rows) await sql.raw(r.definition).execute(db);
  await sql`DROP FUNCTION laurel_ensure_ledger_partition(date)`.execute(db);
  await sql`DROP TABLE ledger_archived_periods, ledger_archives, score_event_keys, laurel_superseded_functions`.execute(db);
  await sql`DROP SCHEMA ledger_archive CASCADE`.execute(db);
}
