import { z } from 'zod';
import type { AppContext } from '../context.js';
import { NotFound } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';
import { finalRegions, rankedRegions } from '../storage/postgres/regions-repository.js';
import { noPeriod, resolvePeriod } from './period-resolution.js';

export const regionsQuerySchema = z.object({
  period: z.string().max(32).default('current'),
});

/**
 * GET /v1/boards/{id}/regions: the regions of the members ranked in a period, sorted by their
 * bytes, the region scopes a standings read can name with something in them. Those of the
 * members ranked now in an open period; those of the final results in a closed one. None on a
 * board that does not rank by region, nor in a current period no event has reached yet.
 */
export async function boardRegions(ctx: AppContext, boardId: string, query: Record<string, unknown>) {
  const q = parseOrThrow(regionsQuerySchema, query, 'query');
  const board = await ctx.boards.get(boardId);
  if (!board) throw new NotFound(`board "${boardId}" not found`);
  const period = await resolvePeriod(ctx, board, q.period);
  if (!period) throw noPeriod(board, q.period);
  const regions =
    !board.regions || !period.stored
      ? []
      : period.view.state === 'closed'
        ? await finalRegions(ctx.db, board.id, period.view.key)
        : await rankedRegions(ctx.db, board.id, period.view.key);
  return { board: board.id, period: period.view, regions };
}
