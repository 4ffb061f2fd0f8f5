import type { AppContext } from '../context.js';
import { boardDefinitionSchema, changedFixedFields, isValidBoardId, type Board } from '../domain/board.js';
import {
  boardHasEvents,
  findBoard,
  insertBoard,
  listBoards,
  lockBoard,
  updateBoard,
} from '../storage/postgres/boards-repository.js';
import { setOpenAllPeriodEnd } from '../storage/postgres/periods-repository.js';
import { periodContaining } from '../domain/period.js';
import { currentPeriods, type PeriodView } from './period-resolution.js';
import { NotFound, Conflict, InvalidInput } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';

export type BoardView = Omit<Board, 'revision' | 'createdAt' | 'updatedAt'> & {
  createdAt: string;
  updatedAt: string;
  /** Null outside the board's window: before a tournament starts and after it ends. */
  currentPeriod: PeriodView | null;
};

async function views(ctx: AppContext, boards: readonly Board[]): Promise<BoardView[]> {
  const current = await currentPeriods(ctx, boards);
  return boards.map((board) => ({
    id: board.id,
    displayName: board.displayName,
    aggregation: board.aggregation,
    order: board.order,
    tieBreak: board.tieBreak,
    period: board.period,
    timezone: board.timezone,
    window: board.window,
    maxAttempts: board.maxAttempts,
    maxMembers: board.maxMembers,
    league: board.league,
    subscore: board.subscore,
    decimals: board.decimals,
    minValue: board.minValue,
    maxValue: board.maxValue,
    categories: board.categories,
    regions: board.regions,
    graceSeconds: board.graceSeconds,
    awards: board.awards,
    createdAt: board.createdAt.toISOString(),
    updatedAt: board.updatedAt.toISOString(),
    currentPeriod: current.get(board.id) ?? null,
  }));
}

/** Creates or replaces a board definition (PUT semantics: omitted fields take their defaults). */
export async function putBoard(
  ctx: AppContext,
  id: string,
  body: unknown,
): Promise<{ created: boolean; board: BoardView }> {
  if (!isValidBoardId(id)) {
    throw new InvalidInput('invalid board id', [{ path: 'boardId', message: 'must match ^[a-z0-9][a-z0-9_-]{0,63}$' }]);
  }
  const def = parseOrThrow(boardDefinitionSchema, body, 'board definition');
  const { board, created } = await ctx.db.transaction().execute(async (trx) => {
    const current = await lockBoard(trx, id);
    if (!current) {
      const inserted = await insertBoard(trx, id, def);
      if (inserted) return { board: inserted, created: true };
      // Another request created it between our read and insert: treat this one as an update.
    }
    const existing = current ?? (await lockBoard(trx, id))!;
    const changed = changedFixedFields(existing, def);
    if (changed.length > 0 && (await boardHasEvents(trx, id))) {
      throw new Conflict(
        `board "${id}" has events; ${changed.join(', ')} cannot change`,
        changed.map((field) => ({ path: field, message: 'fixed once the board has events' })),
      );
    }
    const updated = await updateBoard(trx, id, def);
    if (updated.period === 'all')
      await setOpenAllPeriodEnd(trx, id, periodContaining(updated, updated.updatedAt).endsAt);
    return { board: updated, created: false };
  });
  ctx.boards.remember(board);
  ctx.periods.forget(board.id, 'all');
  return { created, board: (await views(ctx, [board]))[0]! };
}

export async function getBoardView(ctx: AppContext, id: string): Promise<BoardView> {
  const board = isValidBoardId(id) ? await findBoard(ctx.db, id) : undefined;
  if (!board) throw new NotFound(`board "${id}" not found`);
  return (await views(ctx, [board]))[0]!;
}

export async function listBoardViews(ctx: AppContext): Promise<BoardView[]> {
  return views(ctx, await listBoards(ctx.db));
}
