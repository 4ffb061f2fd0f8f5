import type pg from 'pg';
import Cursor from 'pg-cursor';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import type { Board } from '../../domain/board.js';
import { WORLD } from '../../domain/ids.js';
import type { AggregateState } from './events-repository.js';

/**
 * Ranking straight from member_aggregates: the Postgres fallback of every read and the
 * final standings of closed periods. Same order as the sorted sets (value, then reached
 * second for first/last, then member id bytes) and the same `shared` competition ranks.
 * Excluded members and aggregates whose events were all voided are left out.
 */

export interface DbStanding {
  rank: number;
  member: string;
  scaled: number;
}

export interface DbScope {
  period: string;
  category: string;
  region: string;
}

/**
 * The ranking order of a board over member_aggregates `a`, written once for every ranked
 * read, the final standings and the rebuild checks: `full` orders every member (value,
 * then the reached second for first/last, then member id bytes); `value` orders by value
 * alone, for `shared` competition ranks.
 */
export function scopeOrder(board: Board): { full: RawBuilder<unknown>; value: RawBuilder<unknown> } {
  const value = sql.raw(board.order === 'desc' ? 'a.value DESC' : 'a.value ASC');
  const time =
    board.tieBreak === 'first'
      ? sql.raw('floor(extract(epoch FROM a.reached_at)) ASC,')
      : board.tieBreak === 'last'
        ? sql.raw('floor(extract(epoch FROM a.reached_at)) DESC,')
        : sql.raw('');
  return { full: sql`${value}, ${time} a.member_id COLLATE "C"`, value };
}

function ranked(board: Board, scope: DbScope): RawBuilder<unknown> {
  const order = scopeOrder(board);
  const regionFilter = scope.region === WORLD ? sql`` : sql`AND a.region = ${scope.region}`;
  return sql`
    SELECT a.member_id, a.value,
           row_number() OVER (ORDER BY ${order.full}) AS position,
           rank() OVER (ORDER BY ${order.value}) AS shared_rank,
           count(*) OVER () AS total
      FROM member_aggregates a
      JOIN members m ON m.id = a.member_id
     WHERE a.board_id = ${board.id} AND a.period_key = ${scope.period} AND a.category = ${scope.category}
       AND a.event_count > 0 AND m.excluded_at IS NULL ${regionFilter}`;
}

interface RankedRow {
  member_id: string;
  value: number;
  position: number;
  shared_rank: number;
  total: number;
}

function toStanding(board: Board, r: RankedRow): DbStanding {
  return { rank: board.tieBreak === 'shared' ? r.shared_rank : r.position, member: r.member_id, scaled: r.value };
}

export async function countScope(db: Db, board: Board, scope: DbScope): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM (${ranked(board, scope)}) t`.execute(db);
  return rows[0]!.n;
}

export async function rankScope(
  db: Db,
  board: Board,
  scope: DbScope,
  page: { offset: number; limit: number },
): Promise<{ total: number; entries: DbStanding[] }> {
  const { rows } = await sql<RankedRow>`
    SELECT * FROM (${ranked(board, scope)}) t ORDER BY position LIMIT ${page.limit} OFFSET ${page.offset}`.execute(db);
  // A page past the end (or an empty scope) carries no total: count separately.
  const total = rows[0]?.total ?? (await countScope(db, board, scope));
  return { total, entries: rows.map((r) => toStanding(board, r)) };
}

/** The member's rank and 1-based position in the scope order, or null when unranked. */
export async function placeInScope(
  db: Db,
  board: Board,
  scope: DbScope,
  member: string,
): Promise<{ total: number; standing: DbStanding | null; position: number | null }> {
  const { rows } = await sql<RankedRow>`SELECT * FROM (${ranked(board, scope)}) t WHERE t.member_id = ${member}`.execute(db);
  const row = rows[0];
  if (!row) return { total: await countScope(db, board, scope), standing: null, position: null };
  return { total: row.total, standing: toStanding(board, row), position: row.position };
}

/** The given members that are ranked in the scope, in scope order, with their scope ranks. */
export async function pickInScope(db: Db, board: Board, scope: DbScope, members: readonly string[]): Promise<RankedRow[]> {
  if (members.length === 0) return [];
  const { rows } = await sql<RankedRow>`
    SELECT * FROM (${ranked(board, scope)}) t WHERE t.member_id = ANY(${[...members]}::text[]) ORDER BY position`.execute(db);
  return rows;
}

/** One page of a category's aggregates in member-id order, shaped for the projection. */
export async function aggregatePage(
  db: Db,
  ref: { board: string; period: string; category: string },
  after: string,
  limit: number,
): Promise<AggregateState[]> {
  const { rows } = await sql<{ state: AggregateState }>`
    SELECT laurel_aggregate_json(a, b.regions, m.excluded_at IS NOT NULL) AS state
      FROM member_aggregates a
      JOIN boards b ON b.id = a.board_id
      JOIN members m ON m.id = a.member_id
     WHERE a.board_id = ${ref.board} AND a.period_key = ${ref.period} AND a.category = ${ref.category}
       AND a.member_id > ${after}
       -- Implied by the join, but without it Postgres merge-joins members from the first id
       -- for every page: each page read grew with its position, the rebuild with N squared.
       AND m.id > ${after}
     ORDER BY a.member_id
     LIMIT ${limit}`.execute(db);
  return rows.map((r) => r.state);
}

export async function countAggregates(db: Db, ref: { board: string; period: string; category: string }): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM member_aggregates
     WHERE board_id = ${ref.board} AND period_key = ${ref.period} AND category = ${ref.category}`.execute(db);
  return rows[0]!.n;
}

/** The regions members of a category have aggregates in. */
export async function aggregateRegions(db: Db, ref: { board: string; period: string; category: string }): Promise<string[]> {
  const { rows } = await sql<{ region: string }>`
    SELECT DISTINCT region FROM member_aggregates
     WHERE board_id = ${ref.board} AND period_key = ${ref.period} AND category = ${ref.category} AND region IS NOT NULL`.execute(db);
  return rows.map((r) => r.region);
}

/**
 * The whole ranking of one scope, streamed through a server-side cursor in chunks: one
 * pass over Postgres however large the scope, with memory bounded by the chunk.
 */
export async function* streamScope(
  pool: pg.Pool,
  db: Db,
  board: Board,
  scope: DbScope,
  chunk = 5000,
): AsyncGenerator<DbStanding[]> {
  const compiled = sql<RankedRow>`SELECT * FROM (${ranked(board, scope)}) t ORDER BY position`.compile(db);
  const client = await pool.connect();
  try {
    const cursor = client.query(new Cursor<RankedRow>(compiled.sql, [...compiled.parameters]));
    try {
      for (;;) {
        const rows = await cursor.read(chunk);
        if (rows.length === 0) return;
        yield rows.map((r) => toStanding(board, r));
      }
    } finally {
      await cursor.close();
    }
  } finally {
    client.release();
  }
}
