import { sql, type Kysely } from 'kysely';

/**
 * maxMembers: per period, the first `max_members` members to have an event applied
 * (or to be entered through the API) are its entrants. `position` numbers them 1..n without
 * gaps in the order they entered, so the count is one backward probe of the primary key and
 * the list pages by position. An entry is never undone: erasure renames the member instead.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE boards ADD COLUMN max_members int CHECK (max_members BETWEEN 1 AND 10000000)`.execute(db);
  await sql`
    CREATE TABLE board_entrants (
      board_id text NOT NULL,
      period_key text NOT NULL,
      position int NOT NULL CHECK (position >= 1),
      member_id text NOT NULL COLLATE "C",
      entered_at timestamptz NOT NULL,
      PRIMARY KEY (board_id, period_key, position),
      UNIQUE (board_id, period_key, member_id),
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)
    )`.execute(db);
  await sql`CREATE INDEX board_entrants_member_idx ON board_entrants (member_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE board_entrants`.execute(db);
  await sql`ALTER TABLE boards DROP COLUMN max_members`.execute(db);
}
