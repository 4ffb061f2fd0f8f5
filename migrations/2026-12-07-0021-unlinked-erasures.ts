import { sql, type Kysely } from 'kysely';

/** The member of an erased member's keys as of this migration (erasure-repository.ts), frozen here. */
const ERASED_KEY_OWNER = '(erased)';

/**
 * Erasures keep no link from a member id to the pseudonym of their closed results.
 *
 * - `erasures.member_hash` held the id's unkeyed SHA-256, so anyone reading the database
 *   could hash a guessed id, find its record, its pseudonym and the member's final placements.
 *   It now holds an HMAC keyed outside Postgres (`hmac-sha256:<hex>`, erasure-service.ts), and
 *   only until the erasure is done. An unkeyed hash cannot be re-keyed without the id, which
 *   Postgres no longer has: those of finished erasures (done, or failed for good) are dropped;
 *   those of erasures still queued or running stay, in their own form, which their job still
 *   checks, until it is done and drops them.
 * - `score_event_keys` rows of erased members were renamed to the pseudonym: the hash of a
 *   guessable key (`match-17:alice`) then named the member of those results. They now all
 *   belong to one owner that no member id can be. Finding them scans the key table once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE erasures ALTER COLUMN member_hash DROP NOT NULL`.execute(db);
  await sql`UPDATE erasures SET member_hash = NULL WHERE state IN ('done', 'failed')`.execute(db);
  await sql`
    UPDATE score_event_keys k SET member_id = ${ERASED_KEY_OWNER}
     WHERE k.member_id IN (SELECT e.pseudonym FROM erasures e WHERE e.redis_periods IS NOT NULL)`.execute(db);
  await sql`
    COMMENT ON COLUMN erasures.member_hash IS 'hmac-sha256:<hex> of the member id, keyed outside Postgres; null once done'`.execute(
    db,
  );
}

/**
 * Dropped hashes and pseudonyms are not restored: a finished erasure gets an empty hash
 * (its job, were it run again, would be refused), and erased keys keep their one owner.
 */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`COMMENT ON COLUMN erasures.member_hash IS NULL`.execute(db);
  await sql`UPDATE erasures SET member_hash = '' WHERE member_hash IS NULL`.execute(db);
  await sql`ALTER TABLE erasures ALTER COLUMN member_hash SET NOT NULL`.execute(db);
}
