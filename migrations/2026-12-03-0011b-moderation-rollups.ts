import { sql, type Kysely } from 'kysely';

/**
 * Moderation counts in rollups : exclusions, restores, voids and erasures, per
 * board and period. Insert-only and without member ids, like duplicate_log: an erasure
 * deletes the member's events (and so their voided_at), and the counts must not change.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE moderation_log (
      board_id text NOT NULL,
      period_key text NOT NULL,
      at timestamptz NOT NULL,
      kind text NOT NULL CHECK (kind IN ('exclusion', 'restore', 'void', 'erasure'))
    )`.execute(db);
  await sql`CREATE INDEX moderation_log_at_idx ON moderation_log (at)`.execute(db);
  await sql`
    ALTER TABLE rollups
      ADD COLUMN exclusions int NOT NULL DEFAULT 0,
      ADD COLUMN restores int NOT NULL DEFAULT 0,
      ADD COLUMN erasures int NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE rollups DROP COLUMN exclusions, DROP COLUMN restores, DROP COLUMN erasures`.execute(db);
  await sql`DROP TABLE moderation_log`.execute(db);
}
