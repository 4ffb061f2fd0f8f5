import { sql } from 'kysely';
import type { Db } from './database.js';
import { entrantCountSql, entrantsLockSql } from './functions/entrant-rules.js';

export interface Entrant {
  position: number;
  member: string;
  enteredAt: Date;
}

export type EntryOutcome =
  { entered: 'now' | 'before'; entrant: Entrant } | { entered: 'full' } | { entered: 'closed' };

/** The (board, period) as a one-row relation `t(board, period)` for the shared SQL rules. */
const target = (boardId: string, periodKey: string) =>
  sql`(SELECT ${boardId}::text AS board, ${periodKey}::text AS period) t`;

/**
 * Enters a member into an open period of a maxMembers board, under the same locks and rule as
 * laurel_apply_batch (member, then period, then the period's entrants lock), so an entry made
 * here and one made by a batch take distinct places. The caller owns the transaction and has
 * made sure the period row exists.
 */
export async function enterMember(
  trx: Db,
  boardId: string,
  periodKey: string,
  memberId: string,
  maxMembers: number,
  now: Date,
): Promise<EntryOutcome> {
  await trx
    .insertInto('members')
    .values({ id: memberId })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await trx.selectFrom('members').select('id').where('id', '=', memberId).forShare().execute();
  const period = await trx
    .selectFrom('periods')
    .select('state')
    .where('board_id', '=', boardId)
    .where('key', '=', periodKey)
    .forShare()
    .executeTakeFirst();
  if (period?.state !== 'open') return { entered: 'closed' };
  await sql`SELECT pg_advisory_xact_lock(${sql.raw(entrantsLockSql('t.board', 't.period'))}) FROM ${target(boardId, periodKey)}`.execute(
    trx,
  );
  const existing = await trx
    .selectFrom('board_entrants')
    .select(['position', 'member_id', 'entered_at'])
    .where('board_id', '=', boardId)
    .where('period_key', '=', periodKey)
    .where('member_id', '=', memberId)
    .executeTakeFirst();
  if (existing)
    return {
      entered: 'before',
      entrant: { position: existing.position, member: existing.member_id, enteredAt: existing.entered_at },
    };
  const { rows } = await sql<{ position: number; entered_at: Date }>`
    INSERT INTO board_entrants (board_id, period_key, position, member_id, entered_at)
    SELECT t.board, t.period, ${sql.raw(entrantCountSql('t.board', 't.period'))} + 1, ${memberId}, ${now}
      FROM ${target(boardId, periodKey)}
     WHERE ${sql.raw(entrantCountSql('t.board', 't.period'))} < ${maxMembers}
    RETURNING position, entered_at`.execute(trx);
  const row = rows[0];
  return row
    ? { entered: 'now', entrant: { position: row.position, member: memberId, enteredAt: row.entered_at } }
    : { entered: 'full' };
}

/** How many members have entered the period (O(log n)). */
export async function countEntrants(db: Db, boardId: string, periodKey: string): Promise<number> {
  const { rows } = await sql<{
    n: number;
  }>`SELECT ${sql.raw(entrantCountSql('t.board', 't.period'))}::int AS n FROM ${target(boardId, periodKey)}`.execute(
    db,
  );
  return rows[0]!.n;
}

/** A page of entrants in the order they entered, after position `after` (a keyset: stable under new entries). */
export async function listEntrants(
  db: Db,
  boardId: string,
  periodKey: string,
  after: number,
  limit: number,
): Promise<Entrant[]> {
  const rows = await db
    .selectFrom('board_entrants')
    .select(['position', 'member_id', 'entered_at'])
    .where('board_id', '=', boardId)
    .where('period_key', '=', periodKey)
    .where('position', '>', after)
    .orderBy('position')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ position: r.position, member: r.member_id, enteredAt: r.entered_at }));
}
