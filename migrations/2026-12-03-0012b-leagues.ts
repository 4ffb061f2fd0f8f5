import { sql, type Kysely } from 'kysely';

/**
 * Leagues. `league_tiers` holds, per league board and member, the tier they play in
 * next (written at each close that placed them). `league_placements` holds a member's bucket of
 * a period, written in the transaction of their first applied event (or at the previous
 * period's close) and never changed; `slot` numbers a tier's members 1..n in the order they
 * were placed, so the bucket is `<tier>-<ceil(slot / bucketSize)>`. The close fills in the
 * bucket rank, the outcome and the next tier.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE boards ADD COLUMN league jsonb`.execute(db);
  await sql`CREATE INDEX periods_board_start_idx ON periods (board_id, starts_at)`.execute(db);
  // Set by a league close, cleared once the members who waited for it are placed: a crash in
  // between is finished by the next tick.
  await sql`ALTER TABLE periods ADD COLUMN league_waiting boolean NOT NULL DEFAULT false`.execute(db);
  await sql`CREATE INDEX periods_league_waiting_idx ON periods (board_id, key) WHERE league_waiting`.execute(db);
  await sql`
    CREATE TABLE league_tiers (
      board_id text COLLATE "C" NOT NULL REFERENCES boards (id),
      member_id text COLLATE "C" NOT NULL,
      tier text NOT NULL,
      PRIMARY KEY (board_id, member_id)
    )`.execute(db);
  await sql`CREATE INDEX league_tiers_member_idx ON league_tiers (member_id)`.execute(db);
  await sql`
    CREATE TABLE league_placements (
      board_id text COLLATE "C" NOT NULL,
      period_key text COLLATE "C" NOT NULL,
      member_id text COLLATE "C" NOT NULL,
      tier text COLLATE "C" NOT NULL,
      slot int NOT NULL CHECK (slot >= 1),
      bucket text COLLATE "C" NOT NULL,
      placed_at timestamptz NOT NULL,
      bucket_rank int,
      outcome text CHECK (outcome IN ('promoted', 'relegated', 'kept')),
      next_tier text,
      PRIMARY KEY (board_id, period_key, member_id),
      UNIQUE (board_id, period_key, tier, slot),
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    )`.execute(db);
  await sql`CREATE INDEX league_placements_bucket_idx ON league_placements (board_id, period_key, bucket)`.execute(db);
  await sql`CREATE INDEX league_placements_member_idx ON league_placements (member_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE league_placements`.execute(db);
  await sql`DROP TABLE league_tiers`.execute(db);
  await sql`ALTER TABLE periods DROP COLUMN league_waiting`.execute(db);
  await sql`DROP INDEX periods_board_start_idx`.execute(db);
  await sql`ALTER TABLE boards DROP COLUMN league`.execute(db);
}
