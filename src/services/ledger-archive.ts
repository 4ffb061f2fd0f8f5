import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { AppContext } from '../context.js';
import { InvalidInput, Unavailable } from '../domain/errors.js';
import {
  copyArchivedMonth,
  detachMonth,
  dropArchiveTable,
  listLedgerArchives,
  listLedgerPartitions,
  markArchiveFile,
  monthOf,
  MONTH,
  recordArchivedPeriods,
  type LedgerArchive,
  type Month,
} from '../storage/postgres/ledger-partitions.js';

export interface ArchiveOptions {
  /** Archive the months strictly before this one (YYYY-MM, at most the current month). */
  before: Month;
  /** Where to write one gzip'd CSV per month (with a header row). */
  outDir?: string;
  /** Drop the detached table once its file is written. */
  drop?: boolean;
}

export interface ArchiveReport {
  archived: Array<{ month: Month; table: string; events: number; file: string | null; dropped: boolean }>;
  refused: Array<{ month: Month; reason: string }>;
}

type Ctx = Pick<AppContext, 'db' | 'postgres' | 'clock' | 'log'>;

/**
 * Moves whole months out of the ledger: each month's partition is detached into schema
 * ledger_archive (refused while any period that is not closed has events in it), counted,
 * optionally written to <outDir>/score_events_<YYYY-MM>.csv.gz and dropped. Every step is
 * recorded in ledger_archives, so a run that stopped half way is finished by running again.
 * Idempotency keys stay in score_event_keys: an archived event posted again is a duplicate.
 */
export async function archiveLedger(ctx: Ctx, options: ArchiveOptions): Promise<ArchiveReport> {
  const current = monthOf(ctx.clock.now());
  if (!MONTH.test(options.before))
    throw invalid('before', `--before must be a month as YYYY-MM, not "${options.before}"`);
  if (options.before > current)
    throw invalid(
      'before',
      `--before ${options.before} is after the current month ${current}: only past months can be archived`,
    );
  if (options.drop && !options.outDir)
    throw invalid('drop', '--drop needs --out: a month is dropped only once its file is written');
  const report: ArchiveReport = { archived: [], refused: [] };

  for (const partition of await listLedgerPartitions(ctx.db)) {
    if (partition.month >= options.before) continue;
    const outcome = await withLockRetries(ctx, () => detachMonth(ctx.db, partition, ctx.clock.now()));
    if (!outcome.detached) {
      report.refused.push({ month: partition.month, reason: outcome.reason });
      ctx.log.warn({ month: partition.month, reason: outcome.reason }, 'ledger month not archived');
    } else {
      ctx.log.info({ month: partition.month, table: outcome.table }, 'ledger month detached');
    }
  }

  // Finish every step asked for, for months detached now or by an earlier run.
  for (const archive of await listLedgerArchives(ctx.db)) {
    if (archive.month >= options.before || archive.droppedAt) continue;
    const events = archive.events ?? (await recordArchivedPeriods(ctx.db, archive));
    let file = archive.file;
    if (options.outDir && !archive.fileWrittenAt) {
      file = await writeArchiveFile(ctx, { ...archive, events }, options.outDir);
      await markArchiveFile(ctx.db, archive.month, file, ctx.clock.now());
    }
    const dropped = Boolean(options.drop && file);
    if (dropped) await dropArchiveTable(ctx.db, archive, ctx.clock.now());
    report.archived.push({ month: archive.month, table: `ledger_archive.${archive.table}`, events, file, dropped });
  }
  return report;
}

/** Archive files are readable by their owner only. */
export const ARCHIVE_FILE_MODE = 0o600;

/** COPY of the detached table, gzip'd, written under a temporary name and renamed when complete. */
async function writeArchiveFile(
  ctx: Ctx,
  archive: LedgerArchive & { events: number },
  outDir: string,
): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const file = path.resolve(outDir, `score_events_${archive.month}.csv.gz`);
  const partial = `${file}.partial`;
  try {
    // Owner-only: the archive holds every member's events. A partial file left by a stopped
    // run is removed first, since an existing file keeps its old mode.
    await rm(partial, { force: true });
    const rows = await copyArchivedMonth(ctx.postgres, archive.table, (csv) =>
      pipeline(csv, createGzip(), createWriteStream(partial, { mode: ARCHIVE_FILE_MODE })),
    );
    if (rows !== archive.events) {
      throw new Error(`archive of ${archive.month} wrote ${rows} rows, expected ${archive.events}`);
    }
    await rename(partial, file);
    return file;
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}

function invalid(path: string, message: string): InvalidInput {
  return new InvalidInput(message, [{ path, message }]);
}

/** Detaching gives up quickly on a busy ledger; a few spaced tries usually find a gap. */
async function withLockRetries<T>(ctx: Ctx, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof Unavailable) || attempt >= 5) throw err;
      ctx.log.warn({ attempt, err: (err as Error).message }, 'ledger busy; retrying the detach');
      await new Promise((r) => setTimeout(r, 1000 * attempt));
    }
  }
}
