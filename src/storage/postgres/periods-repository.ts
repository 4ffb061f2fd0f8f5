import type { Selectable } from 'kysely';
import type { Db } from './database.js';
import type { PeriodsTable } from './schema.js';

export type PeriodState = 'open' | 'closing' | 'closed';

export interface StoredPeriod {
  boardId: string;
  key: string;
  startsAt: Date;
  endsAt: Date | null;
  state: PeriodState;
  closedAt: Date | null;
}

function toPeriod(row: Selectable<PeriodsTable>): StoredPeriod {
  return {
    boardId: row.board_id,
    key: row.key,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    state: row.state,
    closedAt: row.closed_at,
  };
}

export async function findPeriod(db: Db, boardId: string, key: string): Promise<StoredPeriod | undefined> {
  const row = await db
    .selectFrom('periods')
    .selectAll()
    .where('board_id', '=', boardId)
    .where('key', '=', key)
    .executeTakeFirst();
  return row && toPeriod(row);
}

/** Many periods by (board, key) in one query. */
export async function findPeriods(
  db: Db,
  refs: ReadonlyArray<{ boardId: string; key: string }>,
): Promise<StoredPeriod[]> {
  if (refs.length === 0) return [];
  const rows = await db
    .selectFrom('periods')
    .selectAll()
    .where((eb) => eb.or(refs.map((r) => eb.and([eb('board_id', '=', r.boardId), eb('key', '=', r.key)]))))
    .execute();
  return rows.map(toPeriod);
}

/** Rows per INSERT: four parameters each, under Postgres' 65,535 per statement. */
const PERIODS_PER_INSERT = 10_000;

/** Creates the periods that do not exist yet, one statement per 10,000; returns those it created. */
export async function createPeriods(
  db: Db,
  periods: ReadonlyArray<{ boardId: string; key: string; startsAt: Date; endsAt: Date | null }>,
): Promise<Array<{ board: string; period: string }>> {
  const created: Array<{ board: string; period: string }> = [];
  for (let i = 0; i < periods.length; i += PERIODS_PER_INSERT) {
    const rows = await db
      .insertInto('periods')
      .values(
        periods
          .slice(i, i + PERIODS_PER_INSERT)
          .map((p) => ({ board_id: p.boardId, key: p.key, starts_at: p.startsAt, ends_at: p.endsAt })),
      )
      .onConflict((oc) => oc.columns(['board_id', 'key']).doNothing())
      .returning(['board_id', 'key'])
      .execute();
    for (const r of rows) created.push({ board: r.board_id, period: r.key });
  }
  return created;
}

/**
 * An `all` board's period ends with its window (docs/design/periods.md): when the window changes, the
 * open `all` period follows, so it closes at the new endsAt + graceSeconds (or never).
 */
export async function setOpenAllPeriodEnd(db: Db, boardId: string, endsAt: Date | null): Promise<void> {
  await db
    .updateTable('periods')
    .set({ ends_at: endsAt })
    .where('board_id', '=', boardId)
    .where('key', '=', 'all')
    .where('state', '=', 'open')
    .execute();
}

/**
 * An open, started period closed now: its end becomes `at` and it is marked due without grace
 * (the tick's close does the rest). Guarded by state, under the row lock, so of concurrent
 * requests exactly one is granted. Returns the period as it was when not granted (or
 * undefined when there is none), with `granted` saying which.
 */
export async function requestPeriodClose(
  db: Db,
  boardId: string,
  key: string,
  at: Date,
  reason: string,
): Promise<{ granted: boolean; period: StoredPeriod | undefined }> {
  const row = await db
    .updateTable('periods')
    .set({ ends_at: at, close_requested_at: at, close_reason: reason })
    .where('board_id', '=', boardId)
    .where('key', '=', key)
    .where('state', '=', 'open')
    .where('close_requested_at', 'is', null)
    .where('starts_at', '<=', at)
    .returningAll()
    .executeTakeFirst();
  if (row) return { granted: true, period: toPeriod(row) };
  return { granted: false, period: await findPeriod(db, boardId, key) };
}

/** A board's periods, newest first. */
export async function listPeriods(db: Db, boardId: string, limit: number): Promise<StoredPeriod[]> {
  const rows = await db
    .selectFrom('periods')
    .selectAll()
    .where('board_id', '=', boardId)
    .orderBy('starts_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map(toPeriod);
}

export async function listOpenPeriods(db: Db, boardId: string): Promise<StoredPeriod[]> {
  const rows = await db
    .selectFrom('periods')
    .selectAll()
    .where('board_id', '=', boardId)
    .where('state', '=', 'open')
    .orderBy('starts_at', 'desc')
    .execute();
  return rows.map(toPeriod);
}

/** Reads a period and holds it FOR SHARE until the transaction ends (closing waits). */
export async function lockPeriodShared(db: Db, boardId: string, key: string): Promise<StoredPeriod | undefined> {
  const row = await db
    .selectFrom('periods')
    .selectAll()
    .where('board_id', '=', boardId)
    .where('key', '=', key)
    .forShare()
    .executeTakeFirst();
  return row && toPeriod(row);
}
