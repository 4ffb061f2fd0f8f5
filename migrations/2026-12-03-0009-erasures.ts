import { sql, type Kysely } from 'kysely';

/**
 * Erasures. The record never holds the member id: only its SHA-256, which lets
 * the job check the id it carries, and the pseudonym that replaced it in closed results.
 * `redis_periods` is written by the Postgres step (the periods whose Redis keys held the
 * member), so a retry after it still knows what to remove from Redis.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE erasures (
      id uuid PRIMARY KEY,
      member_hash text NOT NULL,
      pseudonym text NOT NULL,
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
      requested_at timestamptz NOT NULL,
      finished_at timestamptz,
      redis_periods jsonb
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE erasures`.execute(db);
}
