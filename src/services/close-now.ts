import type { AppContext } from '../context.js';
import { Conflict, NotFound } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';
import { enqueue } from '../queue/enqueue.js';
import { lockBoard, setWindowEnd } from '../storage/postgres/boards-repository.js';
import { requestPeriodClose } from '../storage/postgres/periods-repository.js';
import { reasonSchema } from './moderation-service.js';

/**
 * POST /v1/boards/{id}/periods/{key}/close: an open period ends at the moment the request is
 * accepted, without grace, and is then closed by the one close there is (the tick's: final
 * results, awards, reports, webhooks, exactly once). On an `all` board the window ends then
 * too, so the board stays closed. Granted to one request of any number at once; a period
 * already closing or closed, or closed now before, is a 409.
 *
 * The period is due from this commit on: if the tick queued here cannot be added, the
 * scheduled tick closes it within its interval, so the request is still accepted.
 */
export async function closePeriodNow(
  ctx: AppContext,
  boardId: string,
  key: string,
  body: unknown,
  by: string,
): Promise<{ board: string; period: string }> {
  const { reason } = parseOrThrow(reasonSchema, body, 'close');
  const at = ctx.clock.now();
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    // The board row first, as a board update takes it: the window and the period move together.
    const board = await lockBoard(trx, boardId);
    if (!board) throw new NotFound(`board "${boardId}" not found`);
    const { granted, period } = await requestPeriodClose(trx, boardId, key, at, reason);
    if (!period) throw new NotFound(`board "${boardId}" has no period "${key}"`);
    if (!granted) {
      const why =
        period.state !== 'open'
          ? `is ${period.state}`
          : period.startsAt > at
            ? 'has not started'
            : 'is already being closed';
      throw new Conflict(`period "${key}" of board "${boardId}" ${why}`, [{ path: 'period', message: why }]);
    }
    return board.period === 'all' ? { board: await setWindowEnd(trx, boardId, at) } : { board };
  });
  ctx.boards.remember(outcome.board);
  ctx.periods.forget(boardId, key);
  ctx.log.info({ board: boardId, period: key, by }, 'period closed now by an operator');
  await enqueue(ctx.periodsQueue, 'tick', {}).catch((err: Error) =>
    ctx.log.warn(
      { err: err.message, board: boardId, period: key },
      'close tick not queued; the scheduled tick closes it',
    ),
  );
  return { board: boardId, period: key };
}
