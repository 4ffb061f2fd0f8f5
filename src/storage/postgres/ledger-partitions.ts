import type { Readable } from 'node:stream';
import { sql } from 'kysely';
import { to as copyTo } from 'pg-copy-streams';
import { Unavailable } from '../../domain/errors.js';
import type { Db, PostgresHandle } from './database.js';
import { hasPgCode, PG_ERROR } from './pg-errors.js';

/**
 * The ledger (score_events) is partitioned by UTC month of occurred_at, with a default
 * partition for any month that has none (see migrations/...-0001-baseline.ts).
 */

/** This month's partition and the next ones are kept ready (by each migration, then the period tick). */
export const LEDGER_MONTHS_AHEAD = 3;

/** A UTC month as 'YYYY-MM'. */
export type Month = string;

export const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export function monthOf(at: Date): Month {
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function addMonths(month: Month, n: number): Month {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return monthOf(new Date(Date.UTC(y, m - 1 + n, 1)));
}

/** Partition maintenance waits this long for a lock, then gives up until its next run. */
const LOCK_TIMEOUT = '5s';

export interface LedgerPartition {
  name: string;
  month: Month;
  /** Planner estimate (pg_class.reltuples), null before the first ANALYZE: counting a month exactly would read all of it. */
  estimatedEvents: number | null;
}

export async function listLedgerPartitions(db: Db): Promise<LedgerPartition[]> {
  const { rows } = await sql<{ name: string; month: string; estimated: number | null }>`
    SELECT c.relname AS name, replace(substr(c.relname, length('score_events_p') + 1), '_', '-') AS month,
           CASE WHEN c.reltuples >= 0 THEN c.reltuples::bigint END AS estimated
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'score_events'::regclass AND c.relname <> 'score_events_default'
     ORDER BY 1`.execute(db);
  return rows.map((r) => ({ name: r.name, month: r.month, estimatedEvents: r.estimated }));
}

/** Months that have events waiting in the default partition. */
export async function monthsInDefaultPartition(db: Db): Promise<Month[]> {
  const { rows } = await sql<{ month: string }>`
    SELECT DISTINCT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM') AS month FROM score_events_default ORDER BY 1`.execute(
    db,
  );
  return rows.map((r) => r.month);
}

export async function countDefaultPartition(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM score_events_default`.execute(db);
  return rows[0]!.n;
}

/**
 * Creates the month's partition (moving its rows out of the default partition) unless it
 * exists; true when created. One short transaction that gives up after LOCK_TIMEOUT rather
 * than queue in front of ingestion.
 */
export async function ensureMonthPartition(db: Db, month: Month): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`.execute(trx);
    const { rows } = await sql<{ created: boolean }>`
      SELECT laurel_ensure_ledger_partition(${`${month}-01`}::date) AS created`.execute(trx);
    return rows[0]!.created;
  });
}

/**
 * The month's partition as it stands: which periods that are not closed hold events in it.
 * One index probe per such period (there are few), never a scan of the month.
 */
export async function unclosedPeriodsIn(
  db: Db,
  partition: string,
): Promise<Array<{ board: string; period: string; state: string }>> {
  const { rows } = await sql<{ board: string; period: string; state: string }>`
    SELECT q.board_id AS board, q.key AS period, q.state
      FROM periods q
     WHERE q.state <> 'closed'
       AND EXISTS (SELECT 1 FROM ${sql.table(partition)} e WHERE e.board_id = q.board_id AND e.period_key = q.key)
     ORDER BY 1, 2`.execute(db);
  return rows;
}

export interface LedgerArchive {
  month: Month;
  table: string;
  /** Null until counted (a crash between detaching and counting leaves it so). */
  events: number | null;
  detachedAt: Date;
  file: string | null;
  fileWrittenAt: Date | null;
  droppedAt: Date | null;
}

export async function listLedgerArchives(db: Db): Promise<LedgerArchive[]> {
  const rows = await db
    .selectFrom('ledger_archives')
    .select([
      sql<string>`to_char(month, 'YYYY-MM')`.as('month'),
      'archive_table',
      'events',
      'detached_at',
      'file',
      'file_written_at',
      'dropped_at',
    ])
    .orderBy('month')
    .execute();
  return rows.map((r) => ({
    month: r.month,
    table: r.archive_table,
    events: r.events,
    detachedAt: r.detached_at,
    file: r.file,
    fileWrittenAt: r.file_written_at,
    droppedAt: r.dropped_at,
  }));
}

export type DetachOutcome =
  | { detached: true; table: string }
  | { detached: false; unclosed: Array<{ board: string; period: string; state: string }>; reason: string };

/**
 * Detaches a month's partition into schema ledger_archive, provided no period that is not
 * closed has events in it (checked under the lock, so no batch can add one in between).
 * Plain DETACH: CONCURRENTLY is not allowed next to a default partition. It holds ACCESS
 * EXCLUSIVE on score_events only for the catalog change; a lock it cannot get within the
 * timeout fails the call (safe to repeat) rather than stall ingestion behind it.
 */
export async function detachMonth(db: Db, partition: LedgerPartition, now: Date): Promise<DetachOutcome> {
  try {
    return await detachMonthOnce(db, partition, now);
  } catch (err) {
    // A lock not had in time (or a deadlock with a batch) leaves nothing done: worth retrying.
    if (hasPgCode(err, PG_ERROR.lockNotAvailable, PG_ERROR.deadlockDetected)) {
      throw new Unavailable(`the ledger is busy; month ${partition.month} was not detached`, undefined, { cause: err });
    }
    throw err;
  }
}

async function detachMonthOnce(db: Db, partition: LedgerPartition, now: Date): Promise<DetachOutcome> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('lock_timeout', '3s', true)`.execute(trx);
    await sql`SELECT pg_advisory_xact_lock(hashtext('laurel_ledger_partitions'))`.execute(trx);
    const month = `${partition.month}-01`;
    const earlier = await trx
      .selectFrom('ledger_archives')
      .select('archive_table')
      .where(sql<boolean>`month = ${month}::date`)
      .executeTakeFirst();
    if (earlier) {
      // Late events of a never-closing board refilled an archived month: a case for a person.
      return {
        detached: false,
        unclosed: [],
        reason: `the month was archived before (${earlier.archive_table}) and has events again`,
      };
    }
    const refuse = (unclosed: Array<{ board: string; period: string; state: string }>): DetachOutcome => ({
      detached: false,
      unclosed,
      reason: `holds events of periods that are not closed: ${unclosed.map((u) => `${u.board}/${u.period} (${u.state})`).join(', ')}`,
    });
    // A month that is plainly still in use is refused without stopping ingestion even briefly.
    const seen = await unclosedPeriodsIn(trx, partition.name);
    if (seen.length > 0) return refuse(seen);
    // The periods it holds are recorded in the same transaction as the detach: the guard of
    // fromEvents recounts reads them, and must never see the month gone without them. Counted
    // before the exclusive lock (closed periods gain no events), so ingestion waits only for
    // the catalog change.
    const { rows: held } = await sql<{ board_id: string; period_key: string; events: string }>`
      SELECT board_id, period_key, count(*)::text AS events FROM ${sql.table(partition.name)} GROUP BY 1, 2`.execute(
      trx,
    );
    // Parent first, like every insert: taking the partition first could deadlock with one.
    await sql`LOCK TABLE score_events IN ACCESS EXCLUSIVE MODE`.execute(trx);
    const unclosed = await unclosedPeriodsIn(trx, partition.name);
    if (unclosed.length > 0) return refuse(unclosed);
    await sql`ALTER TABLE score_events DETACH PARTITION ${sql.table(partition.name)}`.execute(trx);
    await sql`ALTER TABLE ${sql.table(partition.name)} SET SCHEMA ledger_archive`.execute(trx);
    await trx
      .insertInto('ledger_archives')
      .values({ month, archive_table: partition.name, detached_at: now })
      .execute();
    await sql`
      INSERT INTO ledger_archived_periods (board_id, period_key, month, events)
      SELECT board_id, period_key, ${month}::date, events
        FROM unnest(${held.map((p) => p.board_id)}::text[], ${held.map((p) => p.period_key)}::text[], ${held.map((p) => p.events)}::bigint[])
             AS t (board_id, period_key, events)
      ON CONFLICT DO NOTHING`.execute(trx);
    return { detached: true, table: partition.name };
  });
}

/** Counts a detached month and records which periods it holds events of (no lock on the ledger). */
export async function recordArchivedPeriods(db: Db, archive: LedgerArchive): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const source = sql.table(`ledger_archive.${archive.table}`);
    const month = `${archive.month}-01`;
    await sql`
      INSERT INTO ledger_archived_periods (board_id, period_key, month, events)
      SELECT board_id, period_key, ${month}::date, count(*) FROM ${source} GROUP BY 1, 2
      ON CONFLICT DO NOTHING`.execute(trx);
    const { rows } = await sql<{ n: number }>`
      UPDATE ledger_archives
         SET events = (SELECT coalesce(sum(events), 0) FROM ledger_archived_periods WHERE month = ${month}::date)
       WHERE month = ${month}::date RETURNING events AS n`.execute(trx);
    return rows[0]!.n;
  });
}

export async function markArchiveFile(db: Db, month: Month, file: string, at: Date): Promise<void> {
  await db
    .updateTable('ledger_archives')
    .set({ file, file_written_at: at })
    .where(sql<boolean>`month = ${`${month}-01`}::date`)
    .execute();
}

export async function dropArchiveTable(db: Db, archive: LedgerArchive, at: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`DROP TABLE IF EXISTS ${sql.table(`ledger_archive.${archive.table}`)}`.execute(trx);
    await trx
      .updateTable('ledger_archives')
      .set({ dropped_at: at })
      .where(sql<boolean>`month = ${`${archive.month}-01`}::date`)
      .execute();
  });
}

/** True when some of the period's events left the ledger with an archived month. */
export async function isPeriodArchived(db: Db, board: string, period: string): Promise<boolean> {
  const row = await db
    .selectFrom('ledger_archived_periods')
    .select('month')
    .where('board_id', '=', board)
    .where('period_key', '=', period)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Streams a detached month as CSV (with a header row, in ledger order) into `write`, which
 * consumes the rows; returns how many rows Postgres sent. The client is discarded, not
 * reused, when the COPY failed.
 */
export async function copyArchivedMonth(
  postgres: PostgresHandle,
  table: string,
  write: (rows: Readable) => Promise<void>,
): Promise<number> {
  const client = await postgres.pool.connect();
  let failure: Error | undefined;
  try {
    const source = `ledger_archive.${quoteIdent(table)}`;
    const copy = client.query(
      copyTo(`COPY (SELECT * FROM ${source} ORDER BY occurred_at, id) TO STDOUT WITH (FORMAT csv, HEADER true)`),
    );
    await write(copy);
    return copy.rowCount;
  } catch (err) {
    failure = err as Error;
    throw err;
  } finally {
    client.release(failure);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
