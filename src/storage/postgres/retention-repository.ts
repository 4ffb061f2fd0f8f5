import { sql } from 'kysely';
import type { Db } from './database.js';

/** Closed periods past the cache retention whose Redis keys were not removed yet, oldest close first. */
export async function periodsToEvict(
  db: Db,
  closedBefore: Date,
  limit: number,
): Promise<Array<{ boardId: string; key: string }>> {
  const { rows } = await sql<{ board_id: string; key: string }>`
    SELECT board_id, key FROM periods
     WHERE state = 'closed' AND cache_evicted_at IS NULL AND closed_at <= ${closedBefore}
     ORDER BY closed_at, board_id, key
     LIMIT ${limit}`.execute(db);
  return rows.map((r) => ({ boardId: r.board_id, key: r.key }));
}

export async function markCacheEvicted(db: Db, boardId: string, key: string, now: Date): Promise<void> {
  await sql`UPDATE periods SET cache_evicted_at = ${now} WHERE board_id = ${boardId} AND key = ${key}`.execute(db);
}

/**
 * Every category a period has aggregates in, whatever the board's categories are today (a
 * category removed from the board still has keys of the periods it was used in). A loose
 * index scan of the primary key: one probe per category, whatever the number of members.
 */
export async function periodCategories(db: Db, boardId: string, key: string): Promise<string[]> {
  const { rows } = await sql<{ category: string }>`
    WITH RECURSIVE c(category) AS (
      (SELECT category FROM member_aggregates WHERE board_id = ${boardId} AND period_key = ${key} ORDER BY category LIMIT 1)
      UNION ALL
      SELECT (SELECT m.category FROM member_aggregates m
                WHERE m.board_id = ${boardId} AND m.period_key = ${key} AND m.category > c.category
                ORDER BY m.category LIMIT 1)
        FROM c WHERE c.category IS NOT NULL
    )
    SELECT category FROM c WHERE category IS NOT NULL`.execute(db);
  return rows.map((r) => r.category);
}
