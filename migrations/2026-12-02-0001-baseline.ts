import { sql, type Kysely } from 'kysely';

/**
 * The whole schema as of the first deployment: tables, types, indexes and the ledger's
 * partitioning. Stored functions are not here: they are declared once each under
 * src/storage/postgres/functions/ and installed by hash after the migrations (see
 * src/storage/postgres/migrator.ts). Later migrations change tables and move data only.
 *
 * Frozen in time: this file never imports application code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE boards (
      id text COLLATE "C" PRIMARY KEY,
      display_name text NOT NULL,
      aggregation text NOT NULL CHECK (aggregation IN ('best', 'sum', 'last')),
      sort_order text NOT NULL CHECK (sort_order IN ('desc', 'asc')),
      tie_break text NOT NULL CHECK (tie_break IN ('first', 'last', 'member', 'shared')),
      period_kind text NOT NULL CHECK (period_kind IN ('all', 'day', 'week', 'month')),
      timezone text NOT NULL,
      decimals int NOT NULL CHECK (decimals BETWEEN 0 AND 6),
      min_value numeric,
      max_value numeric,
      categories text[] NOT NULL DEFAULT '{}',
      regions boolean NOT NULL DEFAULT false,
      grace_seconds int NOT NULL CHECK (grace_seconds BETWEEN 0 AND 86400),
      awards jsonb NOT NULL,
      revision int NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE periods (
      board_id text COLLATE "C" NOT NULL REFERENCES boards (id),
      key text COLLATE "C" NOT NULL,
      starts_at timestamptz NOT NULL,
      ends_at timestamptz,
      state text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'closing', 'closed')),
      created_at timestamptz NOT NULL DEFAULT now(),
      closed_at timestamptz,
      closing_started_at timestamptz,
      webhooks_enqueued_at timestamptz,
      PRIMARY KEY (board_id, key)
    )`.execute(db);
  await sql`CREATE INDEX periods_state_idx ON periods (state, ends_at)`.execute(db);

  await sql`
    CREATE TABLE members (
      id text COLLATE "C" PRIMARY KEY,
      display_name text,
      region text COLLATE "C",
      excluded_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  // Idempotency is global: a partitioned table can only enforce uniqueness within a
  // partition, so the keys live here, unpartitioned; laurel_apply_batch claims them in the
  // same transaction as the insert. A row also carries what classifying a repeat needs (hash,
  // where the key counts), so a duplicate never touches the ledger, and it outlives
  // archiving: a key seen once stays a duplicate forever.
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

  // The ledger, partitioned by UTC month of occurred_at so old months can be detached and
  // archived while it stays one table for every query. No event waits for a partition: the
  // default partition takes what no monthly one covers, and laurel_ensure_ledger_partition
  // moves a month's rows out of it when it creates that month's partition.
  await sql`CREATE SEQUENCE score_events_id_seq`.execute(db);
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
      metadata jsonb,
      -- Unique indexes of a partitioned table must hold the partition key: score_event_keys
      -- is the one unique on the idempotency key alone.
      PRIMARY KEY (occurred_at, id),
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    ) PARTITION BY RANGE (occurred_at)`.execute(db);
  await sql`ALTER SEQUENCE score_events_id_seq OWNED BY score_events.id`.execute(db);
  await sql`CREATE TABLE score_events_default PARTITION OF score_events DEFAULT`.execute(db);
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
    CREATE TABLE rejections (
      id bigserial PRIMARY KEY,
      idempotency_key text COLLATE "C" NOT NULL,
      reason text NOT NULL CHECK (reason IN ('period_closed', 'conflict', 'out_of_range')),
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C",
      member_id text COLLATE "C" NOT NULL,
      payload jsonb NOT NULL,
      payload_hash text NOT NULL,
      source text,
      received_at timestamptz NOT NULL,
      rejected_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (idempotency_key, reason, payload_hash)
    )`.execute(db);
  await sql`CREATE INDEX rejections_at_idx ON rejections (rejected_at)`.execute(db);

  // One row per (board, period, category, member); category 'all' holds every event.
  // version increases with every write, so the Redis projection can drop stale writes.
  await sql`
    CREATE TABLE member_aggregates (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      category text COLLATE "C" NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      value bigint NOT NULL CHECK (value BETWEEN -1099511627776 AND 1099511627776),
      reached_at timestamptz NOT NULL,
      last_key text COLLATE "C" NOT NULL,
      event_count int NOT NULL,
      region text COLLATE "C",
      version bigint NOT NULL DEFAULT 1,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (board_id, period_key, category, member_id),
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    )`.execute(db);
  await sql`CREATE INDEX member_aggregates_member_idx ON member_aggregates (member_id)`.execute(db);

  await sql`
    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      role text NOT NULL CHECK (role IN ('ingest', 'read', 'admin')),
      key_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`.execute(db);

  // Followed ids need not be members yet (unknown members are allowed), so no foreign key.
  await sql`
    CREATE TABLE member_follows (
      member_id text COLLATE "C" NOT NULL,
      followed_id text COLLATE "C" NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (member_id, followed_id)
    )`.execute(db);

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

  // Final standings of a closed period, one row per (scope, member); written once at close.
  await sql`
    CREATE TABLE period_results (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      category text COLLATE "C" NOT NULL,
      region text COLLATE "C" NOT NULL,
      position int NOT NULL,
      rank int NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      value bigint NOT NULL,
      PRIMARY KEY (board_id, period_key, category, region, position),
      UNIQUE (board_id, period_key, category, region, member_id),
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    )`.execute(db);

  await sql`
    CREATE TABLE awards (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      category text COLLATE "C" NOT NULL,
      region text COLLATE "C" NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      award text NOT NULL,
      rank int NOT NULL,
      granted_at timestamptz NOT NULL,
      PRIMARY KEY (board_id, period_key, category, region, member_id, award)
    )`.execute(db);
  await sql`CREATE INDEX awards_member_idx ON awards (member_id, granted_at)`.execute(db);

  await sql`
    CREATE TABLE notifications (
      id bigserial PRIMARY KEY,
      member_id text COLLATE "C" NOT NULL,
      kind text NOT NULL,
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      rank int,
      title text NOT NULL,
      body text NOT NULL,
      award text,
      created_at timestamptz NOT NULL,
      UNIQUE (member_id, kind, board_id, period_key)
    )`.execute(db);
  await sql`CREATE INDEX notifications_period_idx ON notifications (board_id, period_key, id)`.execute(db);

  // Insert-only logs (no hot rows to contend on); rollups aggregate them.
  await sql`
    CREATE TABLE duplicate_log (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      at timestamptz NOT NULL,
      duplicates int NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX duplicate_log_at_idx ON duplicate_log (at)`.execute(db);
  await sql`
    CREATE TABLE rebuild_log (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      category text COLLATE "C" NOT NULL,
      members int NOT NULL,
      duration_ms int NOT NULL,
      finished_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX rebuild_log_at_idx ON rebuild_log (finished_at)`.execute(db);

  await sql`
    CREATE TABLE rollups (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      hour timestamptz NOT NULL,
      applied int NOT NULL DEFAULT 0,
      duplicates int NOT NULL DEFAULT 0,
      rejected_period_closed int NOT NULL DEFAULT 0,
      rejected_conflict int NOT NULL DEFAULT 0,
      rejected_out_of_range int NOT NULL DEFAULT 0,
      members int NOT NULL DEFAULT 0,
      lag_p50_ms double precision,
      lag_p99_ms double precision,
      voids int NOT NULL DEFAULT 0,
      rebuilds int NOT NULL DEFAULT 0,
      rebuild_ms bigint NOT NULL DEFAULT 0,
      computed_at timestamptz NOT NULL,
      PRIMARY KEY (board_id, period_key, hour)
    )`.execute(db);

  // laurel_apply_batch's events, parsed from jsonb once, and its outcome per event.
  await sql`
    CREATE TYPE laurel_apply_event AS (
      ord int, key text, board_id text, period_key text, starts_at timestamptz, ends_at timestamptz,
      member_id text, category text, value bigint, occurred_at timestamptz, received_at timestamptz,
      source text, payload_hash text, metadata jsonb, payload jsonb, pre_reason text)`.execute(db);
  await sql`
    CREATE TYPE laurel_apply_outcome AS (
      outcome text, stored_board text, stored_period text, stored_member text, stored_category text)`.execute(db);

  // Every definition of each stored function ever installed (the hash of its text); the one
  // installed last is current. The history tells a process of the previous release (its
  // definition installed before: the database is ahead of it) from one of the next (its
  // definition never installed: the database is behind).
  await sql`
    CREATE TABLE laurel_functions (
      name text NOT NULL,
      hash text NOT NULL,
      installed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (name, hash)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // The stored functions installed after the migrations, whatever their names today.
  await sql`
    DO $$
    DECLARE f regprocedure;
    BEGIN
      FOR f IN SELECT p.oid FROM pg_proc p WHERE p.proname LIKE 'laurel\_%' AND p.pronamespace = current_schema()::regnamespace LOOP
        EXECUTE format('DROP FUNCTION %s', f);
      END LOOP;
    END
    $$`.execute(db);
  await sql`DROP SCHEMA ledger_archive CASCADE`.execute(db);
  for (const table of [
    'laurel_functions',
    'rollups',
    'rebuild_log',
    'duplicate_log',
    'notifications',
    'awards',
    'period_results',
    'member_exclusions',
    'member_follows',
    'api_keys',
    'member_aggregates',
    'rejections',
    'ledger_archived_periods',
    'ledger_archives',
    'score_events',
    'score_event_keys',
    'members',
    'periods',
    'boards',
  ]) {
    await sql`DROP TABLE ${sql.table(table)} CASCADE`.execute(db);
  }
  await sql`DROP TYPE laurel_apply_event, laurel_apply_outcome CASCADE`.execute(db);
}
