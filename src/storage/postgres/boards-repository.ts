import { sql, type Selectable } from 'kysely';
import type { Db } from './database.js';
import type { BoardsTable } from './schema.js';
import {
  leagueOf,
  type Aggregation,
  type Awards,
  type Board,
  type BoardDefinition,
  type League,
} from '../../domain/board.js';
import type { PeriodKind, PeriodSpec } from '../../domain/period.js';
import type { SortOrder, TieBreak } from '../../domain/ranking.js';

function toBoard(row: Selectable<BoardsTable>): Board {
  return {
    id: row.id,
    displayName: row.display_name,
    aggregation: row.aggregation as Aggregation,
    order: row.sort_order as SortOrder,
    tieBreak: row.tie_break as TieBreak,
    period: row.period_schedule ? (row.period_schedule as PeriodSpec) : (row.period_kind as PeriodKind),
    timezone: row.timezone,
    window:
      row.window_starts_at || row.window_ends_at
        ? {
            ...(row.window_starts_at ? { startsAt: row.window_starts_at.toISOString() } : {}),
            ...(row.window_ends_at ? { endsAt: row.window_ends_at.toISOString() } : {}),
          }
        : null,
    maxAttempts: row.max_attempts,
    maxMembers: row.max_members,
    league: (row.league as League | null) ?? null,
    subscore: row.subscore_order ? { order: row.subscore_order as SortOrder } : null,
    decimals: row.decimals,
    minValue: row.min_value === null ? null : Number(row.min_value),
    maxValue: row.max_value === null ? null : Number(row.max_value),
    categories: row.categories,
    regions: row.regions,
    graceSeconds: row.grace_seconds,
    awards: row.awards as Awards,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toColumns(id: string, def: BoardDefinition) {
  return {
    display_name: def.displayName ?? id,
    aggregation: def.aggregation,
    sort_order: def.order,
    tie_break: def.tieBreak,
    period_kind: typeof def.period === 'string' ? def.period : 'cron' in def.period ? 'cron' : 'every',
    period_schedule: typeof def.period === 'string' ? null : JSON.stringify(def.period),
    timezone: def.timezone,
    window_starts_at: def.window?.startsAt ? new Date(def.window.startsAt) : null,
    window_ends_at: def.window?.endsAt ? new Date(def.window.endsAt) : null,
    max_attempts: def.maxAttempts,
    max_members: def.maxMembers,
    league: def.league ? JSON.stringify(leagueOf(def)) : null,
    subscore_order: def.subscore?.order ?? null,
    decimals: def.decimals,
    min_value: def.minValue === null ? null : String(def.minValue),
    max_value: def.maxValue === null ? null : String(def.maxValue),
    categories: def.categories,
    regions: def.regions,
    grace_seconds: def.graceSeconds,
    awards: JSON.stringify(def.awards),
  };
}

export async function listBoards(db: Db): Promise<Board[]> {
  const rows = await db.selectFrom('boards').selectAll().orderBy('id').execute();
  return rows.map(toBoard);
}

export async function findBoards(db: Db, ids: readonly string[]): Promise<Board[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('boards')
    .selectAll()
    .where('id', 'in', [...new Set(ids)])
    .execute();
  return rows.map(toBoard);
}

export async function findBoard(db: Db, id: string): Promise<Board | undefined> {
  const row = await db.selectFrom('boards').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toBoard(row);
}

/** Locks the board row for a definition change; undefined when the board does not exist. */
export async function lockBoard(db: Db, id: string): Promise<Board | undefined> {
  const row = await db.selectFrom('boards').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  return row && toBoard(row);
}

export async function boardHasEvents(db: Db, id: string): Promise<boolean> {
  // Aggregates stay when a month of the ledger is archived; the ledger covers events
  // written without them (tests, repairs).
  const { rows } = await sql<{ has: boolean }>`
    SELECT EXISTS (SELECT 1 FROM member_aggregates WHERE board_id = ${id})
        OR EXISTS (SELECT 1 FROM score_events WHERE board_id = ${id}) AS has`.execute(db);
  return rows[0]!.has;
}

/** Inserts the board; returns undefined if another request created it first. */
export async function insertBoard(db: Db, id: string, def: BoardDefinition): Promise<Board | undefined> {
  const row = await db
    .insertInto('boards')
    .values({ id, ...toColumns(id, def) })
    .onConflict((oc) => oc.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
  return row && toBoard(row);
}

/** Ends a board's window at `at` (a new revision, so every process's copy is refreshed). */
export async function setWindowEnd(db: Db, id: string, at: Date): Promise<Board> {
  const row = await db
    .updateTable('boards')
    .set({ window_ends_at: at, revision: sql`revision + 1`, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toBoard(row);
}

export async function updateBoard(db: Db, id: string, def: BoardDefinition): Promise<Board> {
  const row = await db
    .updateTable('boards')
    .set({ ...toColumns(id, def), revision: sql`revision + 1`, updated_at: sql`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toBoard(row);
}
