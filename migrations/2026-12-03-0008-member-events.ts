import { sql, type Kysely } from 'kysely';

/**
 * GET /v1/members/{id}/events pages a member's events newest `occurredAt` first, from the
 * ledger and the rejections alike, with a keyset cursor: both need an index in that order.
 * Rejections did not keep `occurredAt` (only inside the payload, as posted, possibly
 * absent): it becomes a column, filled from now on by laurel_apply_batch and here for the
 * rows already stored (routing's rule: the time received when none was posted). A row
 * written meanwhile by a worker of the previous release has none, and sorts by its
 * received time (the index expression), which routing would have used only without one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE rejections ADD COLUMN occurred_at timestamptz`.execute(db);
  await sql`UPDATE rejections SET occurred_at = coalesce((payload->>'occurredAt')::timestamptz, received_at)`.execute(
    db,
  );
  await sql`
    CREATE INDEX score_events_member_time_idx ON score_events (member_id, occurred_at DESC, idempotency_key DESC, id DESC)`.execute(
    db,
  );
  await sql`
    CREATE INDEX rejections_member_time_idx ON rejections (member_id, (coalesce(occurred_at, received_at)) DESC, idempotency_key DESC, id DESC)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX rejections_member_time_idx`.execute(db);
  await sql`DROP INDEX score_events_member_time_idx`.execute(db);
  await sql`ALTER TABLE rejections DROP COLUMN occurred_at`.execute(db);
}
