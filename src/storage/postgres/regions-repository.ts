import { sql } from 'kysely';
import type { Db } from './database.js';
import { ALL_CATEGORIES, WORLD } from '../../domain/ids.js';

/**
 * The regions of the members ranked in an open (or closing) period, sorted by their bytes: a
 * loose index scan of member_aggregates_region_rank_idx (board, period, category, region, ...)
 * over the `all` category, where each step is one descent of the index to the first region
 * after the previous one, so a period costs one descent per region, whatever its number of
 * members. A region whose every ranked member is excluded is left out: its check reads the
 * region's entries until one of a member not excluded (the excluded are few, read once
 * through their partial index).
 */
export async function rankedRegions(db: Db, boardId: string, periodKey: string): Promise<string[]> {
  const ranked = sql`a.board_id = ${boardId} AND a.period_key = ${periodKey} AND a.category = ${ALL_CATEGORIES}
       AND a.event_count > 0 AND a.region IS NOT NULL`;
  const { rows } = await sql<{ region: string }>`
    WITH RECURSIVE r(region) AS (
      (SELECT a.region FROM member_aggregates a WHERE ${ranked} ORDER BY a.region LIMIT 1)
      UNION ALL
      SELECT (SELECT a.region FROM member_aggregates a WHERE ${ranked} AND a.region > r.region ORDER BY a.region LIMIT 1)
        FROM r WHERE r.region IS NOT NULL
    )
    SELECT r.region FROM r
     WHERE r.region IS NOT NULL
       AND EXISTS (SELECT 1 FROM member_aggregates a
                    WHERE ${ranked} AND a.region = r.region
                      AND a.member_id NOT IN (SELECT x.id FROM members x WHERE x.excluded_at IS NOT NULL))
     ORDER BY r.region`.execute(db);
  return rows.map((r) => r.region);
}

/**
 * The regions of a closed period's final results (the `all` category), sorted by their bytes:
 * the same loose index scan, on period_results' primary key (board, period, category, region,
 * position). The results are what the period's region standings answer: exclusions and
 * erasures after the close change neither.
 */
export async function finalRegions(db: Db, boardId: string, periodKey: string): Promise<string[]> {
  const scope = sql`p.board_id = ${boardId} AND p.period_key = ${periodKey} AND p.category = ${ALL_CATEGORIES}`;
  const { rows } = await sql<{ region: string }>`
    WITH RECURSIVE r(region) AS (
      (SELECT p.region FROM period_results p WHERE ${scope} ORDER BY p.region LIMIT 1)
      UNION ALL
      SELECT (SELECT p.region FROM period_results p WHERE ${scope} AND p.region > r.region ORDER BY p.region LIMIT 1)
        FROM r WHERE r.region IS NOT NULL
    )
    SELECT r.region FROM r WHERE r.region IS NOT NULL AND r.region <> ${WORLD} ORDER BY r.region`.execute(db);
  return rows.map((r) => r.region);
}
