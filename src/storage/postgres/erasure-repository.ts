import { sql } from 'kysely';
import type { Db } from './database.js';
import { hashedKeySql } from './functions/key-hash.js';

export interface ErasureRow {
  id: string;
  /** Null once done (nothing links the record to the member any more). */
  memberHash: string | null;
  pseudonym: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  requestedAt: Date;
  finishedAt: Date | null;
  /** Null until the Postgres step has run. */
  /** `closed`: the period's Redis keys hold its final ranking (absent on records written before it was kept). */
  redisPeriods: Array<{ board: string; period: string; closed?: boolean }> | null;
}

/**
 * The member of every erased member's keys in score_event_keys: one for all, and no member
 * id can be it (parentheses are not allowed in one), so a duplicate of such a key names nobody.
 */
export const ERASED_KEY_OWNER = '(erased)';

export async function insertErasure(
  db: Db,
  row: { id: string; memberHash: string; pseudonym: string; requestedAt: Date },
): Promise<void> {
  await db
    .insertInto('erasures')
    .values({ id: row.id, member_hash: row.memberHash, pseudonym: row.pseudonym, requested_at: row.requestedAt })
    .execute();
}

export async function deleteErasure(db: Db, id: string): Promise<void> {
  await db.deleteFrom('erasures').where('id', '=', id).execute();
}

export async function findErasure(db: Db, id: string): Promise<ErasureRow | undefined> {
  const row = await db.selectFrom('erasures').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    memberHash: row.member_hash,
    pseudonym: row.pseudonym,
    state: row.state,
    requestedAt: row.requested_at,
    finishedAt: row.finished_at,
    redisPeriods: row.redis_periods as ErasureRow['redisPeriods'],
  };
}

export async function setErasureState(
  db: Db,
  id: string,
  state: 'running' | 'done' | 'failed',
  at: Date,
): Promise<void> {
  await db
    .updateTable('erasures')
    // Done, the record keeps no hash of the member: no job needs it any more.
    .set({
      state,
      ...(state === 'running' ? {} : { finished_at: at }),
      ...(state === 'done' ? { member_hash: null } : {}),
    })
    .where('id', '=', id)
    .where('state', '<>', 'done')
    .execute();
}

export async function memberExists(db: Db, member: string): Promise<boolean> {
  return (await db.selectFrom('members').select('id').where('id', '=', member).executeTakeFirst()) !== undefined;
}

/**
 * Everything Postgres holds of the member, gone in one transaction, which locks the member
 * row FOR UPDATE first: a batch of the member's events (FOR SHARE) either committed before
 * and is erased with the rest, or waits and then starts a new member. Closed periods'
 * results keep their positions under the pseudonym; the member's keys stay claimed (the key
 * table holds them hashed only) under ERASED_KEY_OWNER, never the pseudonym: a key is often
 * guessable (`match-17:alice`), and its hash beside the pseudonym would name the member of
 * those results.
 * Returns the periods whose Redis keys may still hold the member (not evicted yet), and
 * records them on the erasure, in the same transaction, for the Redis step and its retries.
 */
export async function eraseMemberRows(db: Db, erasureId: string, member: string, pseudonym: string) {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT 1 FROM members WHERE id = ${member} FOR UPDATE`.execute(trx);
    const { rows: periods } = await sql<{ board: string; period: string; closed: boolean }>`
      SELECT DISTINCT a.board_id AS board, a.period_key AS period, p.state = 'closed' AS closed
        FROM member_aggregates a JOIN periods p ON p.board_id = a.board_id AND p.key = a.period_key
       WHERE a.member_id = ${member} AND p.cache_evicted_at IS NULL
       ORDER BY 1, 2`.execute(trx);
    // Counted by rollups per board and period (no member id: it stays after the erasure).
    await sql`
      INSERT INTO moderation_log (board_id, period_key, at, kind)
      SELECT DISTINCT a.board_id, a.period_key, e.requested_at, 'erasure'
        FROM member_aggregates a JOIN erasures e ON e.id = ${erasureId}
       WHERE a.member_id = ${member}`.execute(trx);
    await sql`UPDATE period_results SET member_id = ${pseudonym} WHERE member_id = ${member}`.execute(trx);
    // An entry is never undone (docs/design/leagues.md): the place stays taken, under the pseudonym.
    await sql`UPDATE board_entrants SET member_id = ${pseudonym} WHERE member_id = ${member}`.execute(trx);
    // League slots stay taken too (buckets do not shift); the member's tier goes.
    await sql`UPDATE league_placements SET member_id = ${pseudonym} WHERE member_id = ${member}`.execute(trx);
    // Months moved out of the ledger (ledger_archive, not dropped yet) are ledger too: an
    // archive file written afterwards must not hold the member either.
    const archived = await archivedLedgerMonths(trx);
    const ledgers = [sql.table('score_events'), ...archived.map((a) => sql.table(a.table))];
    const ledger = sql.join(
      ledgers.map((t) => sql`SELECT idempotency_key, board_id, period_key FROM ${t} WHERE member_id = ${member}`),
      sql` UNION ALL `,
    );
    await sql`
      UPDATE score_event_keys k SET member_id = ${ERASED_KEY_OWNER}
       WHERE (k.idempotency_key, k.board_id) IN (SELECT ${sql.raw(hashedKeySql('e.idempotency_key'))}, e.board_id FROM (${ledger}) e)
         AND k.member_id = ${member}`.execute(trx);
    await forgetInArchivedCounts(trx, member, archived);
    for (const statement of [
      ...ledgers.map((t) => sql`DELETE FROM ${t} WHERE member_id = ${member}`),
      sql`DELETE FROM member_aggregates WHERE member_id = ${member}`,
      sql`DELETE FROM rejections WHERE member_id = ${member}`,
      sql`DELETE FROM awards WHERE member_id = ${member}`,
      sql`DELETE FROM league_tiers WHERE member_id = ${member}`,
      sql`DELETE FROM notifications WHERE member_id = ${member}`,
      sql`DELETE FROM member_follows WHERE member_id = ${member} OR followed_id = ${member}`,
      sql`DELETE FROM member_exclusions WHERE member_id = ${member}`,
      sql`DELETE FROM members WHERE id = ${member}`,
    ]) {
      await statement.execute(trx);
    }
    await trx
      .updateTable('erasures')
      .set({ state: 'running', redis_periods: JSON.stringify(periods) })
      .where('id', '=', erasureId)
      .execute();
    return periods;
  });
}

/** The detached ledger months still held in Postgres (schema ledger_archive), with their month. */
async function archivedLedgerMonths(trx: Db): Promise<Array<{ table: string; month: string }>> {
  const { rows } = await sql<{ table: string; month: string }>`
    SELECT 'ledger_archive.' || a.archive_table AS table, to_char(a.month, 'YYYY-MM-DD') AS month FROM ledger_archives a
     WHERE a.dropped_at IS NULL AND to_regclass('ledger_archive.' || quote_ident(a.archive_table)) IS NOT NULL
     ORDER BY a.month`.execute(trx);
  return rows;
}

/** The archived months' event counts, less the member's events about to be deleted from them. */
async function forgetInArchivedCounts(trx: Db, member: string, archived: Array<{ table: string; month: string }>) {
  for (const { table, month } of archived) {
    const { rows } = await sql<{ board_id: string; period_key: string; n: number }>`
      SELECT board_id, period_key, count(*)::int AS n FROM ${sql.table(table)} WHERE member_id = ${member} GROUP BY 1, 2`.execute(
      trx,
    );
    for (const r of rows) {
      await sql`
        UPDATE ledger_archived_periods SET events = events - ${r.n}
         WHERE board_id = ${r.board_id} AND period_key = ${r.period_key} AND month = ${month}::date`.execute(trx);
      await sql`UPDATE ledger_archives SET events = events - ${r.n} WHERE month = ${month}::date AND events IS NOT NULL`.execute(
        trx,
      );
    }
  }
}
