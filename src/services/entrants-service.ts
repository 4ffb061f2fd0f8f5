import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { Conflict, InvalidInput, NotFound } from '../domain/errors.js';
import { isValidBoardId } from '../domain/board.js';
import { registrationPeriodOf } from '../domain/period.js';
import { parseOrThrow } from '../domain/validation.js';
import { countEntrants, enterMember, listEntrants } from '../storage/postgres/entrants-repository.js';
import { createPeriods } from '../storage/postgres/periods-repository.js';
import { assertMemberId } from './member-id.js';
import { noPeriod, resolvePeriod } from './period-resolution.js';

export const entrantsQuerySchema = z.object({
  period: z.string().max(32).default('current'),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  cursor: z.string().max(64).optional().meta({ description: 'the `nextCursor` of the previous page' }),
});

/** Opaque to clients: base64url of the last entrant's position (positions never change). */
const encodeCursor = (position: number): string => Buffer.from(`p${position}`).toString('base64url');

function decodeCursor(cursor: string): number {
  const match = /^p(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new InvalidInput('invalid query', [{ path: 'cursor', message: 'not a cursor this route gave' }]);
  return Number(match[1]);
}

async function cappedBoard(ctx: AppContext, boardId: string): Promise<Board & { maxMembers: number }> {
  const board = isValidBoardId(boardId) ? await ctx.boards.get(boardId) : undefined;
  if (!board) throw new NotFound(`board "${boardId}" not found`);
  if (board.maxMembers === null) throw new Conflict(`board "${boardId}" has no maxMembers: it keeps no entrants`);
  return board as Board & { maxMembers: number };
}

/**
 * POST /v1/boards/{id}/entrants/{memberId}: enters a member into the current period without a
 * score (docs/design/leagues.md), or before a board's window opens into its first period:
 * registration runs from the board's creation until its window ends. Idempotent: a member
 * already entered answers their entry again.
 */
export async function enterEntrant(ctx: AppContext, boardId: string, memberId: string) {
  assertMemberId(memberId);
  const board = await cappedBoard(ctx, boardId);
  const now = ctx.clock.now();
  const period = registrationPeriodOf(board, now);
  if (!period)
    throw new Conflict(`board "${board.id}" is past its window (ended ${board.window?.endsAt})`, undefined, {
      code: 'outside_window',
    });
  const closed = () =>
    new Conflict(`period "${period.key}" of board "${board.id}" is closed`, undefined, { code: 'period_closed' });
  if (period.endsAt && now.getTime() > period.endsAt.getTime() + board.graceSeconds * 1000) throw closed();
  const created = await createPeriods(ctx.db, [{ boardId: board.id, ...period }]);
  // A period created empty is complete in Redis by construction, as when the tick creates it.
  if (created.length > 0) await ctx.leaderboard.project([], new Map([[board.id, board]]), { createdPeriods: created });
  const outcome = await ctx.db
    .transaction()
    .execute((trx) => enterMember(trx, board.id, period.key, memberId, board.maxMembers, now));
  if (outcome.entered === 'closed') throw closed();
  if (outcome.entered === 'full') {
    throw new Conflict(
      `board "${board.id}" is full for period "${period.key}" (maxMembers ${board.maxMembers})`,
      undefined,
      { code: 'board_full' },
    );
  }
  return {
    created: outcome.entered === 'now',
    entry: {
      board: board.id,
      period: period.key,
      member: memberId,
      enteredAt: outcome.entrant.enteredAt.toISOString(),
    },
  };
}

/** GET /v1/boards/{id}/entrants: a period's entrants in the order they entered. */
export async function entrantsPage(ctx: AppContext, boardId: string, query: Record<string, unknown>) {
  const q = parseOrThrow(entrantsQuerySchema, query, 'query');
  const after = q.cursor === undefined ? 0 : decodeCursor(q.cursor);
  const board = await cappedBoard(ctx, boardId);
  const resolved = await resolvePeriod(ctx, board, q.period);
  if (!resolved) throw noPeriod(board, q.period);
  const [total, rows] = resolved.stored
    ? await Promise.all([
        countEntrants(ctx.db, board.id, resolved.view.key),
        listEntrants(ctx.db, board.id, resolved.view.key, after, q.limit + 1),
      ])
    : [0, []];
  const page = rows.slice(0, q.limit);
  return {
    board: board.id,
    period: resolved.view,
    total,
    entrants: page.map((e) => ({ member: e.member, enteredAt: e.enteredAt.toISOString() })),
    nextCursor: rows.length > q.limit ? encodeCursor(page[page.length - 1]!.position) : null,
  };
}
