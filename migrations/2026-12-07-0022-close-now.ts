import { sql, type Kysely } from 'kysely';

/**
 * A period an operator closes now: when it was asked (its end moved to that moment, its
 * grace none) and why. The tick closes a period with `close_requested_at` set at once,
 * through the same close as at its end.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE periods
      ADD COLUMN close_requested_at timestamptz,
      ADD COLUMN close_reason text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE periods DROP COLUMN close_requested_at, DROP COLUMN close_reason`.execute(db);
}
