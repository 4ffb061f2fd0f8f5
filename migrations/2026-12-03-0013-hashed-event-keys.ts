import { sql, type Kysely } from 'kysely';

/** The hashed form as of this migration (src/storage/postgres/functions/key-hash.ts), frozen here. */
const hashed = (expr: string) => `'sha256:' || encode(sha256(convert_to(${expr}, 'UTF8')), 'hex')`;

/**
 * score_event_keys holds every idempotency key in its hashed form (`sha256:<hex>`), not
 * only an erased member's: laurel_apply_batch then finds a posted key with one probe instead
 * of two. The plain key stays in the ledger (score_events).
 *
 * An erasure already hashed its member's keys and renamed the rows to its pseudonym, which
 * the erasure record keeps once its Postgres step has run (redis_periods set): those rows are
 * left as they are. The primary key is rebuilt rather than maintained row by row: every row
 * is rewritten anyway, and a key checked one row at a time could meet a posted key that
 * happens to read like another's hash before that one is rewritten in turn.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE score_event_keys DROP CONSTRAINT score_event_keys_pkey`.execute(db);
  await sql`
    UPDATE score_event_keys k SET idempotency_key = ${sql.raw(hashed('k.idempotency_key'))}
     WHERE k.member_id NOT IN (SELECT e.pseudonym FROM erasures e WHERE e.redis_periods IS NOT NULL)`.execute(db);
  await sql`ALTER TABLE score_event_keys ADD PRIMARY KEY (idempotency_key)`.execute(db);
  await sql`COMMENT ON COLUMN score_event_keys.idempotency_key IS 'sha256:<hex> of the idempotency key (functions/key-hash.ts)'`.execute(
    db,
  );
}

/** Keys whose event is still in the ledger get their plain form back; archived ones stay hashed. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    UPDATE score_event_keys k SET idempotency_key = e.idempotency_key
      FROM score_events e
     WHERE k.idempotency_key = ${sql.raw(hashed('e.idempotency_key'))} AND e.occurred_at = k.occurred_at`.execute(db);
  await sql`COMMENT ON COLUMN score_event_keys.idempotency_key IS NULL`.execute(db);
}
