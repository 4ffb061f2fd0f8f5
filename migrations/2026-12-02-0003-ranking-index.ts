import { sql, type Kysely } from 'kysely';

/**
 * The Postgres fallback of the standings reads ranks from an index instead of sorting the
 * scope: a member's rank is a count of index entries ahead of it (index-only: the tie
 * columns are included), a top page reads the first offset + limit entries. Excluded
 * members are few; their own partial index lets each read leave them out cheaply.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE INDEX member_aggregates_rank_idx ON member_aggregates (board_id, period_key, category, value, member_id)
      INCLUDE (reached_at, region) WHERE event_count > 0`.execute(db);
  await sql`CREATE INDEX members_excluded_idx ON members (id) WHERE excluded_at IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX members_excluded_idx`.execute(db);
  await sql`DROP INDEX member_aggregates_rank_idx`.execute(db);
}
