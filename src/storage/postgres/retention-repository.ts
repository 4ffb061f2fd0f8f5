import { sql } from 'kysely';
import type { Db } from './database.js';

/** Closed periods past the cache retention whose Redis keys were not removed yet, oldest close first. */
export async function periodsToEvict(db: Db, closedBefore: Date, limit: number): Promise<Array<{ boardId: string; key: string }>> {
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
