import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import { ALL_CATEGORIES, WORLD } from '../../domain/ids.js';

/**
 * `r(region)`: the distinct regions of the rows of `table` (aliased `t`) that `where` keeps,
 * by a loose index scan of an index led by the scope's columns and then region: each step is
 * one descent of the index to the first region after the previous one, so it costs one
 * descent per region, whatever the number of rows, and stops after MAX_REGIONS (region codes
 * are free text: a read route must not walk an unbounded number). Ends with a null row.
 */
function distinctRegions(table: 'member_aggregates' | 'period_results', where: RawBuilder<unknown>) {
  const t = sql.table(table);
  return sql`
    WITH RECURSIVE r(region, n) AS (
      (SELECT t.region, 1 FROM ${t} t WHERE ${where} ORDER BY t.region LIMIT 1)
      UNION ALL
      SELECT (SELECT t.region FROM ${t} t WHERE ${where} AND t.region > r.region ORDER BY t.region LIMIT 1), r.n + 1
        FROM r WHERE r.region IS NOT NULL AND r.n < ${MAX_REGIONS}
    )`;
}

/** The most regions a regions read lists (the first by their bytes). */
export const MAX_REGIONS = 1000;

/**
 * The regions of the members ranked in an open (or closing) period, sorted by their bytes,
 * over the `all` category of member_aggregates_region_rank_idx (board, period, category,
 * region, ...). A region whose every ranked member is excluded is left out: its check reads
 * the region's entries until one of a member not excluded (the excluded are few, read once
 * through their partial index).
 */
export async function rankedRegions(db: Db, boardId: string, periodKey: string): Promise<string[]> {
  const ranked = sql`t.board_id = ${boardId} AND t.period_key = ${periodKey} AND t.category = ${ALL_CATEGORIES}
       AND t.event_count > 0 AND t.region IS NOT NULL`;
  const { rows } = await sql<{ region: string }>`
    ${distinctRegions('member_aggregates', ranked)}
    SELECT r.region FROM r
     WHERE r.region IS NOT NULL
       AND EXISTS (SELECT 1 FROM member_aggregates t
                    WHERE ${ranked} AND t.region = r.region
                      AND t.member_id NOT IN (SELECT x.id FROM members x WHERE x.excluded_at IS NOT NULL))
     ORDER BY r.region`.execute(db);
  return rows.map((r) => r.region);
}

/**
 * The regions of a closed period's final results (the `all` category), sorted by their bytes,
 * over period_results' primary key (board, period, category, region, position). The results
 * are what the period's region standings answer: exclusions and erasures after the close
 * change neither.
 */
export async function finalRegions(db: Db, boardId: string, periodKey: string): Promise<string[]> {
  const scope = sql`t.board_id = ${boardId} AND t.period_key = ${periodKey} AND t.category = ${ALL_CATEGORIES}`;
  const { rows } = await sql<{ region: string }>`
    ${distinctRegions('period_results', scope)}
    SELECT r.region FROM r WHERE r.region IS NOT NULL AND r.region <> ${WORLD} ORDER BY r.region`.execute(db);
  return rows.map((r) => r.region);
}
