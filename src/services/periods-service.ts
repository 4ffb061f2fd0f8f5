import { z } from 'zod';
import type { AppContext } from '../context.js';
import { conflict, notFound, parseOrThrow } from '../http/errors.js';
import { listPeriods } from '../storage/postgres/periods-repository.js';
import { rankScope } from '../storage/postgres/standings-repository.js';
import { displayNames } from '../storage/postgres/members-repository.js';
import { unscale } from '../domain/decimal.js';
import { pageQuerySchema, resolveScope } from './standings-service.js';

const periodsQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

export async function boardPeriods(ctx: AppContext, boardId: string, query: Record<string, unknown>) {
  const { limit } = parseOrThrow(periodsQuerySchema, query, 'query');
  const board = await ctx.boards.get(boardId);
  if (!board) throw notFound(`board "${boardId}" not found`);
  const periods = await listPeriods(ctx.db, boardId, limit);
  return {
    board: boardId,
    periods: periods.map((p) => ({
      key: p.key,
      startsAt: p.startsAt.toISOString(),
      endsAt: p.endsAt?.toISOString() ?? null,
      state: p.state,
    })),
  };
}

/**
 * Final standings of a closed period, ranked from Postgres (never from Redis), in the
 * shape of the live standings. An open period has no final results yet: 409.
 */
export async function periodResults(ctx: AppContext, boardId: string, key: string, query: Record<string, unknown>) {
  const page = parseOrThrow(pageQuerySchema.omit({ period: true }), query, 'query');
  const scope = await resolveScope(ctx, boardId, { ...query, period: key });
  if (scope.period.state !== 'closed') {
    throw conflict(`period "${key}" of board "${boardId}" is ${scope.period.state}; final results exist once it is closed`);
  }
  const ranked = await rankScope(ctx.db, scope.board, { period: key, category: scope.category, region: scope.region }, page);
  const names = await displayNames(ctx.db, ranked.entries.map((e) => e.member));
  return {
    board: boardId,
    period: scope.period,
    category: scope.category,
    region: scope.region,
    total: ranked.total,
    source: 'database' as const,
    limit: page.limit,
    offset: page.offset,
    entries: ranked.entries.map((e) => ({
      rank: e.rank,
      member: e.member,
      displayName: names.get(e.member) ?? null,
      score: unscale(e.scaled, scope.board.decimals),
    })),
    awards: [] as unknown[],
  };
}
