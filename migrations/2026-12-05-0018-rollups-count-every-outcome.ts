import { sql, type Kysely } from 'kysely';

/**
 * The rollups count every way an event can be refused: outside the board's window, the board
 * full, and beyond the member's attempts (stored in the ledger, never counted). Zero in the
 * rows written before this; the next run of the job recomputes the last three hours.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE rollups
      ADD COLUMN rejected_outside_window integer NOT NULL DEFAULT 0,
      ADD COLUMN rejected_board_full integer NOT NULL DEFAULT 0,
      ADD COLUMN rejected_attempts_exhausted integer NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE rollups
      DROP COLUMN rejected_outside_window,
      DROP COLUMN rejected_board_full,
      DROP COLUMN rejected_attempts_exhausted`.execute(db);
}
