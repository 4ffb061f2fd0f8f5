import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE periods ADD COLUMN closing_started_at timestamptz, ADD COLUMN webhooks_enqueued_at timestamptz`.execute(db);
  await sql`CREATE INDEX periods_state_idx ON periods (state, ends_at)`.execute(db);

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
  await sql`CREATE INDEX score_events_applied_idx ON score_events (applied_at)`.execute(db);
  await sql`CREATE INDEX rejections_at_idx ON rejections (rejected_at)`.execute(db);

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
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['rollups', 'rebuild_log', 'duplicate_log', 'notifications', 'awards', 'period_results']) {
    await sql`DROP TABLE ${sql.table(t)}`.execute(db);
  }
  await sql`DROP INDEX score_events_applied_idx`.execute(db);
  await sql`DROP INDEX rejections_at_idx`.execute(db);
  await sql`DROP INDEX periods_state_idx`.execute(db);
  await sql`ALTER TABLE periods DROP COLUMN closing_started_at, DROP COLUMN webhooks_enqueued_at`.execute(db);
}
