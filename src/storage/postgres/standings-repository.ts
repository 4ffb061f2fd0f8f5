import type pg from 'pg';
import Cursor from 'pg-cursor';
import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import type { Board } from '../../domain/board.js';
import { WORLD } from '../../domain/ids.js';
import type { Scope } from '../../domain/scope.js';
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
  /** Scaled; on boards with a subscore only. */
  subscore?: number;
}

/**
 * The ranking order of a board over member_aggregates `a`, written once for every ranked
 * read, the final standings and the rebuild checks: `full` orders every member (value,
 * then the subscore on a board with one, then the reached second for first/last, then
 * member id bytes); `reversed` is `full` backwards (read from a member towards the top);
 * `value` orders by value and subscore alone, for `shared` competition ranks.
 */
export function scopeOrder(board: Board): {
  full: RawBuilder<unknown>;
  reversed: RawBuilder<unknown>;
  value: RawBuilder<unknown>;
} {
  const keys = (backwards: boolean) => {
    const way = (ascending: boolean) => (ascending !== backwards ? 'ASC' : 'DESC');
    const value = `a.value ${way(board.order === 'asc')}${board.subscore ? `, a.subscore ${way(board.subscore.order === 'asc')}` : ''}`;
    const time =
      board.tieBreak === 'first' || board.tieBreak === 'last'
        ? `floor(extract(epoch FROM a.reached_at)) ${way(board.tieBreak === 'first')}, `
        : '';
    return { full: sql.raw(`${value}, ${time}a.member_id COLLATE "C" ${way(true)}`), value: sql.raw(value) };
  };
  return { full: keys(false).full, reversed: keys(true).full, value: keys(false).value };
}

function ranked(scope: Scope): RawBuilder<unknown> {
  const { board } = scope;
  const order = scopeOrder(board);
  const regionFilter = scope.region === WORLD ? sql`` : sql`AND a.region = ${scope.region}`;
  return sql`
    SELECT a.member_id, a.value, a.subscore,
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
  subscore: number;
  position: number;
  shared_rank: number;
  total: number;
}

function toStanding(
  board: Board,
  r: Pick<RankedRow, 'member_id' | 'value' | 'subscore' | 'position' | 'shared_rank'>,
): DbStanding {
  return {
    rank: board.tieBreak === 'shared' ? r.shared_rank : r.position,
    member: r.member_id,
    scaled: r.value,
    ...subscoreOf(board, r.subscore),
  };
}

function subscoreOf(board: Board, subscore: number): { subscore?: number } {
  return board.subscore ? { subscore: Number(subscore) } : {};
}

/**
 * The scope's ranked rows (excluded members left out), written once for the index-backed
 * reads below: the range on member_aggregates_rank_idx, less the few excluded members,
 * read once through their partial index into a hashed set (NOT IN over a non-null key),
 * so a scan probes a hash per entry instead of an index.
 */
function inScope(scope: Scope): RawBuilder<unknown> {
  return sql`${scopeRows(scope)}
       AND a.member_id NOT IN (SELECT x.id FROM members x WHERE x.excluded_at IS NOT NULL)`;
}

/** The scope's rows of member_aggregates `a`, excluded members included. */
function scopeRows(scope: Scope): RawBuilder<unknown> {
  const { board } = scope;
  const regionFilter = scope.region === WORLD ? sql`` : sql`AND a.region = ${scope.region}`;
  return sql`a.board_id = ${board.id} AND a.period_key = ${scope.period} AND a.category = ${scope.category}
       AND a.event_count > 0 ${regionFilter}`;
}

/**
 * Counts of the scope's ranked rows, in one pass: `where` bounds the rows read (an index
 * range: a count is index-only on member_aggregates_count_idx when it reads only value),
 * and each of `filters` is counted among them (`c0`, `c1`, ...). Each count is that of all
 * the rows, less the few excluded members' (found through their partial index), which is
 * cheaper than an anti-join on every row counted.
 */
function countRows(
  scope: Scope,
  filters: ReadonlyArray<RawBuilder<unknown>>,
  where: RawBuilder<unknown> = sql`true`,
): RawBuilder<unknown> {
  const { board } = scope;
  const counts = sql.join(filters.map((f, i) => sql`count(*) FILTER (WHERE ${f}) AS ${sql.raw(`c${i}`)}`));
  const less = sql.join(filters.map((_, i) => sql.raw(`(t.c${i} - x.c${i})::int AS c${i}`)));
  return sql`(SELECT ${less} FROM
      (SELECT ${counts} FROM member_aggregates a WHERE ${scopeRows(scope)} AND ${where}) t,
      (SELECT ${counts} FROM members x JOIN member_aggregates a
          ON a.board_id = ${board.id} AND a.period_key = ${scope.period} AND a.category = ${scope.category} AND a.member_id = x.id
        WHERE x.excluded_at IS NOT NULL AND ${scopeRows(scope)} AND ${where}) x)`;
}

/** How many ranked rows of the scope satisfy `condition` (read as an index range). */
function countWhere(scope: Scope, condition: RawBuilder<unknown> = sql`true`): RawBuilder<number> {
  return sql<number>`(SELECT c0 FROM ${countRows(scope, [sql`true`], condition)} n)`;
}

/** Rows of `a` strictly ahead of (`v`, `sub`) by (value, subscore), in the board's order. */
function pairAhead(board: Board, v: RawBuilder<unknown>, sub: RawBuilder<unknown>): RawBuilder<unknown> {
  return board.subscore ? sql`(${better(board, v)} OR ${subscoreAhead(board, v, sub)})` : better(board, v);
}

/** Rows of `a` of value `v` whose subscore is ahead of `sub` (none on a board without subscores). */
function subscoreAhead(board: Board, v: RawBuilder<unknown>, sub: RawBuilder<unknown>): RawBuilder<unknown> {
  if (!board.subscore) return sql`false`;
  const op = sql.raw(board.subscore.order === 'desc' ? '>' : '<');
  return sql`(a.value = ${v} AND a.subscore ${op} ${sub})`;
}

/** Among rows of `me`'s value and subscore, those ahead of `me` in the full order. */
function pairTieAhead(board: Board): RawBuilder<unknown> {
  return sql`a.value = me.value AND a.subscore = me.subscore AND ${tieAhead(board)}`;
}

/** `a.value` strictly better than `v` (or `v` and better with `orEqual`), in the board's order. */
function better(board: Board, v: RawBuilder<unknown>, orEqual = false): RawBuilder<unknown> {
  const op = sql.raw(board.order === 'desc' ? (orEqual ? '>=' : '>') : orEqual ? '<=' : '<');
  return sql`a.value ${op} ${v}`;
}

/** Among rows of equal value, those ahead of `me` in the full order (reached second, then member id bytes). */
function tieAhead(board: Board): RawBuilder<unknown> {
  const second = (alias: string) => sql.raw(`floor(extract(epoch FROM ${alias}.reached_at))`);
  const byMember = sql`a.member_id < me.member_id`;
  if (board.tieBreak !== 'first' && board.tieBreak !== 'last') return byMember;
  const op = sql.raw(board.tieBreak === 'first' ? '<' : '>');
  return sql`(${second('a')} ${op} ${second('me')} OR (${second('a')} = ${second('me')} AND ${byMember}))`;
}

/**
 * The rows at positions (after, upTo] of the scope order, read from the first position of
 * the value `first` on, `ahead` rows being strictly better than it: only that value's ties
 * before the page and the page itself are read and ordered fully (an incremental sort of
 * equal values over the rank index's value order).
 */
function positionsFrom(
  scope: Scope,
  first: RawBuilder<unknown>,
  ahead: RawBuilder<unknown>,
  after: RawBuilder<unknown>,
  upTo: RawBuilder<unknown>,
) {
  const { board } = scope;
  const order = scopeOrder(board);
  return sql`SELECT * FROM (
          SELECT a.member_id, a.value, a.subscore,
                 ${ahead} + row_number() OVER (ORDER BY ${order.full}) AS position,
                 ${ahead} + rank() OVER (ORDER BY ${order.value}) AS shared_rank
            FROM member_aggregates a
           WHERE ${first} IS NOT NULL AND ${inScope(scope)} AND NOT ${better(board, first)}
           ORDER BY ${order.full}
           LIMIT greatest(${upTo} - ${ahead}, 0)) p
         WHERE p.position > ${after}`;
}

/**
 * One page in ranking order, with the scope's total, in one statement: the total is one
 * count (a page past it reads nothing more); the value at the page's first position is an
 * offset on the rank index in value order (index-only, no sort: positions hold the same
 * values whatever the tie rule); the members ahead of that value are one count; then the
 * page is read from that value's first position (positionsFrom). So a page costs the count
 * plus O(offset) index entries, and sorts only its own rows and their ties.
 */
export async function rankScope(
  db: Db,
  scope: Scope,
  page: { offset: number; limit: number },
): Promise<{ total: number; entries: DbStanding[] }> {
  const { board } = scope;
  const direction = sql.raw(board.order === 'desc' ? 'DESC' : 'ASC');
  const first = sql`(SELECT value FROM first)`;
  const { rows } = await sql<RankedRow>`
    WITH total AS (SELECT ${countWhere(scope)} AS n),
    first AS (
      SELECT a.value FROM member_aggregates a
       WHERE ${inScope(scope)} AND ${page.offset} < (SELECT n FROM total)
       ORDER BY a.value ${direction}, a.member_id ${direction}
      OFFSET ${page.offset} LIMIT 1),
    ahead AS (SELECT ${countWhere(scope, better(board, first))} AS n)
    SELECT total.n AS total, t.member_id, t.value, t.subscore, t.position, t.shared_rank
      FROM total LEFT JOIN LATERAL (${positionsFrom(scope, first, sql`(SELECT n FROM ahead)`, sql`${page.offset}`, sql`${page.offset + page.limit}`)}) t ON true
     ORDER BY t.position`.execute(db);
  const total = rows[0]?.total ?? 0;
  return { total, entries: rows.filter((r) => r.member_id !== null).map((r) => toStanding(board, r)) };
}

/**
 * The member and up to `radius` rows on each side, with the scope's total, in one
 * statement and without an offset: the member's position is counted as for a rank (one
 * pass); the `radius` rows ahead of them are read backwards from them, which gives the
 * page's first value; the rows ahead of that value are the member's count less the few
 * between; then the page is read as any page (positionsFrom).
 */
export async function aroundInScope(
  db: Db,
  scope: Scope,
  member: string,
  radius: number,
): Promise<{ total: number; entries: DbStanding[] }> {
  const { board } = scope;
  const meValue = sql`(SELECT value FROM me)`;
  const meSubscore = sql`(SELECT subscore FROM me)`;
  const first = sql`(SELECT value FROM first)`;
  const position = sql`(SELECT n FROM place)`;
  const best = sql.raw(board.order === 'desc' ? 'max' : 'min');
  const { rows } = await sql<RankedRow>`
    WITH me AS (SELECT a.member_id, a.value, a.subscore, a.reached_at FROM member_aggregates a WHERE ${inScope(scope)} AND a.member_id = ${member}),
    counted AS (
      SELECT c0 AS total, c1 AS better, c2 AS subscore_ahead
        FROM ${countRows(scope, [sql`true`, better(board, meValue), subscoreAhead(board, meValue, meSubscore)])} n),
    place AS (SELECT counted.better + counted.subscore_ahead + ${countWhere(scope, pairTieAhead(board))} + 1 AS n FROM counted, me),
    lead AS (
      SELECT a.value FROM member_aggregates a, me
       WHERE ${inScope(scope)} AND ${better(board, meValue, true)}
         AND (a.value <> me.value OR ${subscoreAhead(board, sql`me.value`, sql`me.subscore`)} OR (a.subscore = me.subscore AND ${tieAhead(board)}))
       ORDER BY ${scopeOrder(board).reversed} LIMIT ${radius}),
    first AS (SELECT coalesce((SELECT ${best}(value) FROM lead), me.value) AS value FROM me),
    ahead AS (SELECT counted.better - ${countWhere(scope, sql`${better(board, meValue)} AND NOT ${better(board, first)}`)} AS n FROM counted)
    SELECT counted.total, t.member_id, t.value, t.subscore, t.position, t.shared_rank
      FROM counted LEFT JOIN LATERAL (${positionsFrom(scope, first, sql`(SELECT n FROM ahead)`, sql`${position} - 1 - ${radius}`, sql`${position} + ${radius}`)}) t ON true
     ORDER BY t.position`.execute(db);
  const total = rows[0]?.total ?? 0;
  return { total, entries: rows.filter((r) => r.member_id !== null).map((r) => toStanding(board, r)) };
}

/**
 * The member's rank and 1-based position in the scope order, or null when unranked: counts
 * of the index entries ahead of it (better values, then ties ahead), never a sort.
 */
export async function placeInScope(
  db: Db,
  scope: Scope,
  member: string,
): Promise<{ total: number; standing: DbStanding | null; position: number | null }> {
  const { total, placed } = await placeManyInScope(db, scope, [member]);
  const found = placed[0];
  return found
    ? { total, standing: found.standing, position: found.position }
    : { total, standing: null, position: null };
}

/**
 * placeInScope for many members in one statement (the event streams' fallback): the ranked
 * ones among them with their rank and position, and the scope's total counted once.
 */
export async function placeManyInScope(
  db: Db,
  scope: Scope,
  members: readonly string[],
): Promise<{ total: number; placed: Array<{ standing: DbStanding; position: number }> }> {
  const { board } = scope;
  // One member (a rank, around, `me`): the total and the members ahead in one pass over the
  // scope. More (the streams, `members=`): the total once, then a count up to each member.
  const one = members.length === 1;
  const meValue = sql`(SELECT value FROM me)`;
  const meSubscore = sql`(SELECT subscore FROM me)`;
  const { rows } = await sql<{
    total: number;
    member_id: string | null;
    value: number | null;
    subscore: number;
    better: number | null;
    ties: number | null;
  }>`
    WITH me AS (SELECT a.member_id, a.value, a.subscore, a.reached_at FROM member_aggregates a
                 WHERE ${inScope(scope)} AND a.member_id = ANY(${[...members]}::text[])),
    counted AS (SELECT c0 AS total, c1 AS better FROM ${countRows(scope, [sql`true`, one ? pairAhead(board, meValue, meSubscore) : sql`false`])} n)
    SELECT counted.total,
           me.member_id,
           me.value,
           me.subscore,
           ${one ? sql`counted.better` : countWhere(scope, pairAhead(board, sql`me.value`, sql`me.subscore`))} AS better,
           ${countWhere(scope, pairTieAhead(board))} AS ties
      FROM counted LEFT JOIN me ON true`.execute(db);
  const placed = rows.flatMap((row) => {
    if (row.member_id === null || row.value === null || row.better === null || row.ties === null) return [];
    const position = row.better + row.ties + 1;
    const rank = board.tieBreak === 'shared' ? row.better + 1 : position;
    return [
      { standing: { rank, member: row.member_id, scaled: row.value, ...subscoreOf(board, row.subscore) }, position },
    ];
  });
  return { total: rows[0]?.total ?? 0, placed };
}

/** The given members that are ranked in the scope, in scope order. */
export async function pickInScope(
  db: Db,
  scope: Scope,
  members: readonly string[],
): Promise<Array<{ member: string; scaled: number; subscore?: number }>> {
  const { board } = scope;
  if (members.length === 0) return [];
  const { rows } = await sql<{ member_id: string; value: number; subscore: number }>`
    SELECT a.member_id, a.value, a.subscore FROM member_aggregates a
     WHERE ${inScope(scope)} AND a.member_id = ANY(${[...members]}::text[])
     ORDER BY ${scopeOrder(board).full}`.execute(db);
  return rows.map((r) => ({ member: r.member_id, scaled: r.value, ...subscoreOf(board, r.subscore) }));
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

export async function countAggregates(
  db: Db,
  ref: { board: string; period: string; category: string },
): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM member_aggregates
     WHERE board_id = ${ref.board} AND period_key = ${ref.period} AND category = ${ref.category}`.execute(db);
  return rows[0]!.n;
}

/** The regions members of a category have aggregates in. */
export async function aggregateRegions(
  db: Db,
  ref: { board: string; period: string; category: string },
): Promise<string[]> {
  const { rows } = await sql<{ region: string }>`
    SELECT DISTINCT region FROM member_aggregates
     WHERE board_id = ${ref.board} AND period_key = ${ref.period} AND category = ${ref.category} AND region IS NOT NULL`.execute(
    db,
  );
  return rows.map((r) => r.region);
}

/**
 * The whole ranking of one scope, streamed through a server-side cursor in chunks: one
 * pass over Postgres however large the scope, with memory bounded by the chunk.
 */
export async function* streamScope(pool: pg.Pool, db: Db, scope: Scope, chunk = 5000): AsyncGenerator<DbStanding[]> {
  const { board } = scope;
  const compiled = sql<RankedRow>`SELECT * FROM (${ranked(scope)}) t ORDER BY position`.compile(db);
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
