import { sql, type Kysely } from 'kysely';

/**
 * Board windows: events outside [starts, ends) are rejected `outside_window`.
 * All the later rejection reasons are allowed here at once, so the later
 * features (attempts, entrants) need no further change of this constraint.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE boards ADD COLUMN window_starts_at timestamptz, ADD COLUMN window_ends_at timestamptz`.execute(
    db,
  );
  await sql`ALTER TABLE boards ADD CONSTRAINT boards_window_check CHECK (window_starts_at < window_ends_at)`.execute(
    db,
  );
  await sql`ALTER TABLE rejections DROP CONSTRAINT rejections_reason_check`.execute(db);
  await sql`
    ALTER TABLE rejections ADD CONSTRAINT rejections_reason_check
      CHECK (reason IN ('period_closed', 'conflict', 'out_of_range', 'outside_window', 'attempts_exhausted', 'board_full'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE rejections DROP CONSTRAINT rejections_reason_check`.execute(db);
  await sql`DELETE FROM rejections WHERE reason NOT IN ('period_closed', 'conflict', 'out_of_range')`.execute(db);
  await sql`ALTER TABLE rejections ADD CONSTRAINT rejections_reason_check CHECK (reason IN ('period_closed', 'conflict', 'out_of_range'))`.execute(
    db,
  );
  await sql`ALTER TABLE boards DROP COLUMN window_starts_at, DROP COLUMN window_ends_at`.execute(db);
}
