import { sql, type Kysely } from 'kysely';

/**
 * An event's identity is (board, idempotency key): the same key posted to two boards is two
 * events. Every key so far was unique across boards, so every row keeps its meaning; only
 * the constraints widen. The key column stays first, so the lookups by key alone
 * (GET /v1/events/{key} without a board) still use these indexes.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE score_event_keys DROP CONSTRAINT score_event_keys_pkey`.execute(db);
  await sql`ALTER TABLE score_event_keys ADD PRIMARY KEY (idempotency_key, board_id)`.execute(db);
  await sql`ALTER TABLE rejections DROP CONSTRAINT rejections_idempotency_key_reason_payload_hash_key`.execute(db);
  await sql`
    ALTER TABLE rejections ADD CONSTRAINT rejections_key_board_reason_hash_key
      UNIQUE (idempotency_key, board_id, reason, payload_hash)`.execute(db);
}

/** Refused (a unique violation) once a key is held by two boards: such events cannot be told apart by key alone. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE rejections DROP CONSTRAINT rejections_key_board_reason_hash_key`.execute(db);
  await sql`
    ALTER TABLE rejections ADD CONSTRAINT rejections_idempotency_key_reason_payload_hash_key
      UNIQUE (idempotency_key, reason, payload_hash)`.execute(db);
  await sql`ALTER TABLE score_event_keys DROP CONSTRAINT score_event_keys_pkey`.execute(db);
  await sql`ALTER TABLE score_event_keys ADD PRIMARY KEY (idempotency_key)`.execute(db);
}
