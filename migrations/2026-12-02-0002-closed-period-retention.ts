import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // When the period tick removed a closed period's leaderboard keys (CLOSED_PERIOD_CACHE_HOURS
  // after the close); its reads are answered from period_results from then on.
  await sql`ALTER TABLE periods ADD COLUMN cache_evicted_at timestamptz`.execute(db);
  // The tick's search for closed periods still holding keys: only those, oldest close first.
  await sql`CREATE INDEX periods_cache_eviction_idx ON periods (closed_at) WHERE state = 'closed' AND cache_evicted_at IS NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX periods_cache_eviction_idx`.execute(db);
  await sql`ALTER TABLE periods DROP COLUMN cache_evicted_at`.execute(db);
}
