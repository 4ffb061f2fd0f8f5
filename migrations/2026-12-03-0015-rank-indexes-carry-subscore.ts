import { sql, type Kysely } from 'kysely';

/**
 * On a board with a subscore, the fallback's counts and pages compare it among equal values:
 * the rank indexes carry it, so those reads stay index-only instead of visiting the table
 * for every tied entry.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX member_aggregates_rank_idx`.execute(db);
  await sql`
    CREATE INDEX member_aggregates_rank_idx ON member_aggregates (board_id, period_key, category, value, member_id)
      INCLUDE (reached_at, region, subscore) WHERE event_count > 0`.execute(db);
  await sql`DROP INDEX member_aggregates_region_rank_idx`.execute(db);
  await sql`
    CREATE INDEX member_aggregates_region_rank_idx ON member_aggregates (board_id, period_key, category, region, value, member_id)
      INCLUDE (reached_at, subscore) WHERE event_count > 0 AND region IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX member_aggregates_region_rank_idx`.execute(db);
  await sql`
    CREATE INDEX member_aggregates_region_rank_idx ON member_aggregates (board_id, period_key, category, region, value, member_id)
      INCLUDE (reached_at) WHERE event_count > 0 AND region IS NOT NULL`.execute(db);
  await sql`DROP INDEX member_aggregates_rank_idx`.execute(db);
  await sql`
    CREATE INDEX member_aggregates_rank_idx ON member_aggregates (board_id, period_key, category, value, member_id)
      INCLUDE (reached_at, region) WHERE event_count > 0`.execute(db);
}
