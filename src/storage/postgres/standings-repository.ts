import { sql } from 'kysely';
import type { Db } from './database.js';
import type { Board } from '../../domain/board.js';
import { WORLD } from '../../domain/ids.js';

export interface DbStanding {
  rank: number;
  member: string;
  scaled: number;
}

/**
 * Ranks one scope straight from member_aggregates, with the same order as the sorted sets
 * (value, then reached second for first/last, then member id bytes) and the same `shared`
 * competition ranks. Excluded members and aggregates whose events were all voided are left out.
 */
export async function rankScope(
  db: Db,
  board: Board,
  scope: { period: string; category: string; region: string },
  page: { offset: number; limit: number },
): Promise<{ total: number; entries: DbStanding[] }> {
  const valueOrder = sql.raw(board.order === 'desc' ? 'a.value DESC' : 'a.value ASC');
  const timeOrder =
    board.tieBreak === 'first'
      ? sql.raw('floor(extract(epoch FROM a.reached_at)) ASC,')
      : board.tieBreak === 'last'
        ? sql.raw('floor(extract(epoch FROM a.reached_at)) DESC,')
        : sql.raw('');
  const regionFilter = scope.region === WORLD ? sql`` : sql`AND a.region = ${scope.region}`;
  const { rows } = await sql<{ member_id: string; value: number; position: number; shared_rank: number; total: number }>`
    SELECT a.member_id, a.value,
           row_number() OVER (ORDER BY ${valueOrder}, ${timeOrder} a.member_id COLLATE "C") AS position,
           rank() OVER (ORDER BY ${valueOrder}) AS shared_rank,
           count(*) OVER () AS total
      FROM member_aggregates a
      JOIN members m ON m.id = a.member_id
     WHERE a.board_id = ${board.id} AND a.period_key = ${scope.period} AND a.category = ${scope.category}
       AND a.event_count > 0 AND m.excluded_at IS NULL ${regionFilter}
     ORDER BY position
     LIMIT ${page.limit} OFFSET ${page.offset}
  `.execute(db);
  let total = rows[0]?.total;
  if (total === undefined) {
    // The page is past the end (or the scope is empty): count separately.
    const counted = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM member_aggregates a JOIN members m ON m.id = a.member_id
       WHERE a.board_id = ${board.id} AND a.period_key = ${scope.period} AND a.category = ${scope.category}
         AND a.event_count > 0 AND m.excluded_at IS NULL ${regionFilter}`.execute(db);
    total = counted.rows[0]!.n;
  }
  return {
    total,
    entries: rows.map((r) => ({
      rank: board.tieBreak === 'shared' ? r.shared_rank : r.position,
      member: r.member_id,
      scaled: r.value,
    })),
  };
}
