import { sql, type Kysely } from 'kysely';

/**
 * Every index and foreign key of the ledger tables is maintained on each laurel_apply_batch
 * call; these served no read another index does not serve as well, or guarded nothing the
 * single writer does not already guarantee (docs/design/ledger.md, "Indexes and the reads
 * they serve"):
 * - score_events_member_only_idx (member_id): the erasure's reads of a member's events are the
 *   leading column of score_events_member_time_idx.
 * - The foreign keys of score_events and member_aggregates to periods: both tables are
 *   written only by laurel_apply_batch, which inserts the period and holds it FOR SHARE in
 *   the same transaction before any row of it, and by laurel_recompute_aggregates, which only
 *   writes periods it found; periods are never deleted nor renamed. The checks cost a lookup
 *   of periods per ledger row inserted (and per new aggregate), and on the ledger one
 *   validation per partition attached.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX score_events_member_only_idx`.execute(db);
  await sql`ALTER TABLE score_events DROP CONSTRAINT score_events_board_id_period_key_fkey`.execute(db);
  await sql`ALTER TABLE member_aggregates DROP CONSTRAINT member_aggregates_board_id_period_key_fkey`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE member_aggregates ADD CONSTRAINT member_aggregates_board_id_period_key_fkey
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)`.execute(db);
  await sql`
    ALTER TABLE score_events ADD CONSTRAINT score_events_board_id_period_key_fkey
      FOREIGN KEY (board_id, period_key) REFERENCES periods (board_id, key)`.execute(db);
  await sql`CREATE INDEX score_events_member_only_idx ON score_events (member_id)`.execute(db);
}
