import { sql, type Kysely } from 'kysely';

/**
 * Two indexes for the Postgres fallback of standings reads, beside member_aggregates_rank_idx:
 * - a world scope's counts (its total, the members ahead of a value) read value alone: keyed on
 *   it, equal keys share one deduplicated posting list, so a count reads about a fifth of the
 *   pages the rank index holds for the same entries;
 * - a region scope is its own index range (counts, offsets and pages), instead of a filter
 *   over every entry of the world scope.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE INDEX member_aggregates_count_idx ON member_aggregates (board_id, period_key, category, value)
      WHERE event_count > 0`.execute(db);
  await sql`
    CREATE INDEX member_aggregates_region_rank_idx ON member_aggregates (board_id, period_key, category, region, value, member_id)
      INCLUDE (reached_at) WHERE event_count > 0 AND region IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX member_aggregates_region_rank_idx`.execute(db);
  await sql`DROP INDEX member_aggregates_count_idx`.execute(db);
}
