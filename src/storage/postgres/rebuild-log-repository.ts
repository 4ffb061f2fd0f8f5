import type { Db } from './database.js';

/** One finished scope rebuild, for the hourly rollups. */
export async function recordRebuild(
  db: Db,
  r: { board: string; period: string; category: string; members: number; durationMs: number; finishedAt: Date },
): Promise<void> {
  await db
    .insertInto('rebuild_log')
    .values({
      board_id: r.board,
      period_key: r.period,
      category: r.category,
      members: r.members,
      duration_ms: r.durationMs,
      finished_at: r.finishedAt,
    })
    .execute();
}
