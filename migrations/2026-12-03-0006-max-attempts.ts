import { sql, type Kysely } from 'kysely';

/**
 * Attempts: per member and period only the first `max_attempts` events by
 * (occurredAt, key) count. Every event of such a board is kept in the ledger; one beyond the
 * first n is `exhausted` (never counted), whatever order the events arrived in.
 * Adding the constraint to the partitioned ledger checks every attached partition once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE boards ADD COLUMN max_attempts int CHECK (max_attempts BETWEEN 1 AND 10000)`.execute(db);
  await sql`ALTER TABLE score_events DROP CONSTRAINT score_events_status_check`.execute(db);
  await sql`ALTER TABLE score_events ADD CONSTRAINT score_events_status_check CHECK (status IN ('applied', 'voided', 'exhausted'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE score_events DROP CONSTRAINT score_events_status_check`.execute(db);
  await sql`UPDATE score_events SET status = 'voided', void_reason = 'attempts exhausted' WHERE status = 'exhausted'`.execute(
    db,
  );
  await sql`ALTER TABLE score_events ADD CONSTRAINT score_events_status_check CHECK (status IN ('applied', 'voided'))`.execute(
    db,
  );
  await sql`ALTER TABLE boards DROP COLUMN max_attempts`.execute(db);
}
