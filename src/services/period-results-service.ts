import { z } from 'zod';
import type { AppContext } from '../context.js';
import { listPeriods } from '../storage/postgres/periods-repository.js';
import { resultsPage } from '../storage/postgres/final-results-repository.js';
import { memberAwards, memberNotifications, scopeAwards } from '../storage/postgres/closing-repository.js';
import { assertMemberId } from './member-id.js';
import { displayNames } from '../storage/postgres/members-repository.js';
import { unscale } from '../domain/decimal.js';
import { entrySubscore, pageQuerySchema, resolveScope, withMetadata } from './standings-service.js';
import { NotFound, Conflict } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';

export const periodsQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) });

export async function boardPeriods(ctx: AppContext, boardId: string, query: Record<string, unknown>) {
  const { limit } = parseOrThrow(periodsQuerySchema, query, 'query');
  const board = await ctx.boards.get(boardId);
  if (!board) throw new NotFound(`board "${boardId}" not found`);
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
 * Final standings of a closed period as computed from Postgres when it closed, in the
 * shape of the live standings, with the awards of the scope. An open period: 409.
 */
export async function periodResults(ctx: AppContext, boardId: string, key: string, query: Record<string, unknown>) {
  const page = parseOrThrow(resultsQuerySchema, query, 'query');
  const scope = await resolveScope(ctx, boardId, { ...query, period: key });
  if (scope.view.state !== 'closed') {
    throw new Conflict(
      `period "${key}" of board "${boardId}" is ${scope.view.state}; final results exist once it is closed`,
    );
  }
  const [final, awards] = await Promise.all([
    resultsPage(ctx.db, scope, page.offset, page.limit),
    scopeAwards(ctx.db, scope),
  ]);
  const names = await displayNames(
    ctx.db,
    final.entries.map((e) => e.member),
  );
  return {
    board: boardId,
    period: scope.view,
    category: scope.category,
    region: scope.region,
    total: final.total,
    source: 'database' as const,
    limit: page.limit,
    offset: page.offset,
    entries: await withMetadata(
      ctx,
      scope,
      page.metadata,
      final.entries.map((e) => ({
        rank: e.rank,
        member: e.member,
        displayName: names.get(e.member) ?? null,
        score: unscale(e.scaled, scope.board.decimals),
        ...entrySubscore(scope.board, e.subscore),
      })),
    ),
    awards: awards.map((a) => ({ member: a.member_id, award: a.award, rank: a.rank })),
  };
}

/** The standings page query without `period`: the period is the path's key. */
export const resultsQuerySchema = pageQuerySchema.omit({ period: true });

export const notificationsQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(500).default(50) });

export async function awardsOf(ctx: AppContext, memberId: string) {
  assertMemberId(memberId);
  const rows = await memberAwards(ctx.db, memberId);
  return {
    member: memberId,
    awards: rows.map((a) => ({
      board: a.board_id,
      period: a.period_key,
      category: a.category,
      region: a.region,
      award: a.award,
      rank: a.rank,
      grantedAt: a.granted_at.toISOString(),
    })),
  };
}

export async function notificationsOf(ctx: AppContext, memberId: string, query: Record<string, unknown>) {
  const { limit } = parseOrThrow(notificationsQuerySchema, query, 'query');
  assertMemberId(memberId);
  const rows = await memberNotifications(ctx.db, memberId, limit);
  return {
    member: memberId,
    notifications: rows.map((n) => ({
      id: n.id,
      kind: n.kind,
      board: n.board_id,
      period: n.period_key,
      rank: n.rank,
      title: n.title,
      body: n.body,
      award: n.award,
      createdAt: n.created_at.toISOString(),
    })),
  };
}
