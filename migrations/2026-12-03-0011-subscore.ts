import { sql, type Kysely } from 'kysely';

/**
 * Subscores: a board may order equal scores by a second number. `subscore_order`
 * null means the board has none. An aggregate's subscore is 0 when its events carried none,
 * so every ordering can name the column without a null case. The event type gains the
 * field last: laurel_apply_batch (installed in the same transaction) aliases its columns
 * by position.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE boards ADD COLUMN subscore_order text CHECK (subscore_order IN ('desc', 'asc'))`.execute(db);
  await sql`ALTER TABLE score_events ADD COLUMN subscore bigint`.execute(db);
  await sql`
    ALTER TABLE member_aggregates ADD COLUMN subscore bigint NOT NULL DEFAULT 0
      CHECK (subscore BETWEEN -1099511627776 AND 1099511627776)`.execute(db);
  await sql`ALTER TABLE period_results ADD COLUMN subscore bigint`.execute(db);
  await sql`ALTER TYPE laurel_apply_event ADD ATTRIBUTE subscore bigint`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TYPE laurel_apply_event DROP ATTRIBUTE subscore`.execute(db);
  await sql`ALTER TABLE period_results DROP COLUMN subscore`.execute(db);
  await sql`ALTER TABLE member_aggregates DROP COLUMN subscore`.execute(db);
  await sql`ALTER TABLE score_events DROP COLUMN subscore`.execute(db);
  await sql`ALTER TABLE boards DROP COLUMN subscore_order`.execute(db);
}
