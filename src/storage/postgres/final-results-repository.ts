import { sql, type RawBuilder } from 'kysely';
import type { Db } from './database.js';
import type { MemberInScope, Scope } from '../../domain/scope.js';
import type { Placed } from '../../domain/ranking.js';

/**
 * Reads of a closed period's stored final standings (period_results), each one round trip
 * on the table's two indexes: the primary key (scope, position) and the unique
 * (scope, member_id). Positions of a scope run 1..total without gaps (row_number at close),
 * so the total is the highest position (one index probe, no count) and a page or a
 * neighbourhood is a position range: O(log N) however large the period.
 */

export interface ResultEntry {
  rank: number;
  member: string;
  scaled: number;
  /** Scaled; on boards with a subscore only. */
  subscore?: number;
}

function inScope(s: Scope, alias: string): RawBuilder<unknown> {
  const t = sql.raw(alias);
  return sql`${t}.board_id = ${s.board.id} AND ${t}.period_key = ${s.period} AND ${t}.category = ${s.category} AND ${t}.region = ${s.region}`;
}

function totalOf(s: Scope): RawBuilder<unknown> {
  return sql`(SELECT coalesce(max(x.position), 0) FROM period_results x WHERE ${inScope(s, 'x')})`;
}

interface Row {
  total: number;
  rank: number | null;
  member_id: string | null;
  value: number | null;
  subscore?: number | null;
}

function entries(rows: readonly Row[]): ResultEntry[] {
  return rows
    .filter((r) => r.member_id !== null)
    .map((r) => ({
      rank: r.rank!,
      member: r.member_id!,
      scaled: r.value!,
      ...(r.subscore == null ? {} : { subscore: r.subscore }),
    }));
}

/** A member's placement as the cache gives it: the subscore only for a ranked member on a board with one. */
function placedOf(r: Row): Placed {
  return {
    total: r.total,
    rank: r.rank,
    scaled: r.value,
    ...(r.subscore == null || r.rank === null ? {} : { subscore: r.subscore }),
  };
}

/** Positions first+1 .. first+count of the scope, with its total. */
async function positionRange(db: Db, s: Scope, first: RawBuilder<unknown>, count: RawBuilder<unknown>) {
  const { rows } = await sql<Row>`
    WITH t AS (SELECT ${totalOf(s)} AS total)
    SELECT t.total::int AS total, r.rank, r.member_id, r.value, r.subscore
      FROM t LEFT JOIN LATERAL (
        SELECT r.rank, r.member_id, r.value, r.subscore, r.position FROM period_results r
         WHERE ${inScope(s, 'r')} AND r.position > ${first} AND r.position <= ${first} + ${count}
         ORDER BY r.position) r ON true
     ORDER BY r.position`.execute(db);
  return { total: rows[0]?.total ?? 0, entries: entries(rows) };
}

export async function resultsPage(db: Db, s: Scope, offset: number, limit: number) {
  return positionRange(db, s, sql`${offset}::int`, sql`${limit}::int`);
}

/** The member and up to `radius` entries either side; no entries when the member is not ranked. */
export async function resultsAround(db: Db, s: Scope, member: string, radius: number) {
  const me = sql`(SELECT m.position FROM period_results m WHERE ${inScope(s, 'm')} AND m.member_id = ${member})`;
  return positionRange(db, s, sql`(${me} - 1 - ${radius}::int)`, sql`(2 * ${radius}::int + 1)`);
}

/** The member's stored rank and value, with the scope's total. */
export async function resultOfMember(db: Db, s: Scope, member: string) {
  const { rows } = await sql<Row>`
    SELECT ${totalOf(s)}::int AS total, r.rank, r.member_id, r.value, r.subscore
      FROM (SELECT 1) one LEFT JOIN period_results r ON ${inScope(s, 'r')} AND r.member_id = ${member}`.execute(db);
  return placedOf(rows[0]!);
}

/** The given members that are ranked in the scope, in scope order. */
export async function resultsOfMembers(db: Db, s: Scope, members: readonly string[]): Promise<ResultEntry[]> {
  if (members.length === 0) return [];
  const { rows } = await sql<Row>`
    SELECT 0 AS total, r.rank, r.member_id, r.value, r.subscore FROM period_results r
     WHERE ${inScope(s, 'r')} AND r.member_id = ANY(${[...members]}::text[])
     ORDER BY r.position`.execute(db);
  return entries(rows);
}

/** One member's stored placement in many scopes (one per closed period), in query order. */
export async function resultsOfMemberMany(db: Db, queries: readonly MemberInScope[]) {
  if (queries.length === 0) return [];
  const col = (f: (q: MemberInScope) => string) => queries.map(f);
  const { rows } = await sql<Row & { i: number }>`
    SELECT q.i::int AS i,
           (SELECT coalesce(max(x.position), 0) FROM period_results x
             WHERE x.board_id = q.b AND x.period_key = q.p AND x.category = q.c AND x.region = q.g)::int AS total,
           r.rank, r.member_id, r.value, r.subscore
      FROM unnest(${col((q) => q.board.id)}::text[], ${col((q) => q.period)}::text[], ${col((q) => q.category)}::text[],
                  ${col((q) => q.region)}::text[], ${col((q) => q.member)}::text[]) WITH ORDINALITY q(b, p, c, g, m, i)
      LEFT JOIN period_results r
        ON r.board_id = q.b AND r.period_key = q.p AND r.category = q.c AND r.region = q.g AND r.member_id = q.m
     ORDER BY q.i`.execute(db);
  return rows.map(placedOf);
}
