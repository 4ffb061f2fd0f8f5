import type { AppContext } from '../context.js';
import { unscale } from '../domain/decimal.js';
import { IDEMPOTENCY_KEY } from '../domain/ids.js';
import { periodContaining } from '../domain/period.js';
import { pendingJobOf } from '../storage/redis/pending-events.js';
import {
  archivedMonthOf,
  currentAggregate,
  findEvent,
  findLatestRejection,
} from '../storage/postgres/events-repository.js';
import { NotFound } from '../domain/errors.js';
import { boardOfKey } from './event-lookup.js';

/** What only admins see of an event: why it was voided, and what a refused one carried. */
const ADMIN_ONLY = ['voidReason', 'payload'] as const;

/**
 * GET /v1/events/{key}?board=: the event of that board (boardOfKey picks it when no board is
 * named). The ledger answers applied / voided, the rejections table answers
 * rejected, and a queued job answers pending. The pending mark is read first, so an event
 * applied in between is still found in the ledger. Any ingest key may ask about any event,
 * so moderation notes and refused payloads (another studio server's data) are for admins.
 */
export async function eventStatus(
  ctx: AppContext,
  key: string,
  options: { admin: boolean; board?: string },
): Promise<Record<string, unknown>> {
  if (!IDEMPOTENCY_KEY.test(key)) throw new NotFound(`no event with idempotency key "${key}"`);
  const board = await boardOfKey(ctx, key, options.board);
  const status = await fullEventStatus(ctx, board, key);
  if (options.admin) return status;
  for (const field of ADMIN_ONLY) delete status[field];
  return status;
}

async function fullEventStatus(ctx: AppContext, boardId: string, key: string): Promise<Record<string, unknown>> {
  const missing = () => new NotFound(`no event with idempotency key "${key}" on board "${boardId}"`);
  const pendingJobId = await pendingJobOf(ctx.leaderboard, { board: boardId, key });
  const stored = await findEvent(ctx.db, boardId, key);
  if (stored) {
    const board = await ctx.boards.get(stored.board);
    const aggregate = await currentAggregate(ctx.db, stored);
    return {
      idempotencyKey: stored.key,
      // Stored, but beyond the member's attempts: it never counted.
      ...(stored.status === 'exhausted'
        ? { status: 'rejected', reason: 'attempts_exhausted' }
        : { status: stored.status }),
      board: stored.board,
      period: stored.period,
      member: stored.member,
      category: stored.category,
      value: board ? unscale(stored.value, board.decimals) : stored.value,
      occurredAt: stored.occurredAt.toISOString(),
      receivedAt: stored.receivedAt.toISOString(),
      appliedAt: stored.appliedAt.toISOString(),
      source: stored.source,
      score: aggregate === null || !board ? null : unscale(aggregate, board.decimals),
      ...(stored.status === 'voided'
        ? { voidReason: stored.voidReason, voidedAt: stored.voidedAt?.toISOString() }
        : {}),
    };
  }
  const job = pendingJobId ? await ctx.scoreQueue.getJob(pendingJobId) : undefined;
  const queued = job?.data.events.find((e) => e.posted.idempotencyKey === key && e.posted.board === boardId);
  if (queued) {
    // Not applied yet: the period it will count in, and the member's score there so far.
    const board = await ctx.boards.get(queued.posted.board);
    const period = board ? periodContaining(board, new Date(queued.posted.occurredAt ?? queued.receivedAt)).key : null;
    const aggregate =
      board && period
        ? await currentAggregate(ctx.db, { board: board.id, period, member: queued.posted.member })
        : null;
    return {
      idempotencyKey: key,
      status: 'pending',
      jobId: pendingJobId,
      board: queued.posted.board,
      member: queued.posted.member,
      period,
      receivedAt: queued.receivedAt,
      score: aggregate === null || !board ? null : unscale(aggregate, board.decimals),
    };
  }
  const rejection = await findLatestRejection(ctx.db, boardId, key);
  if (rejection) {
    const board = await ctx.boards.get(rejection.board);
    const aggregate = rejection.period
      ? await currentAggregate(ctx.db, { board: rejection.board, period: rejection.period, member: rejection.member })
      : null;
    return {
      idempotencyKey: rejection.key,
      status: 'rejected',
      reason: rejection.reason,
      board: rejection.board,
      period: rejection.period,
      member: rejection.member,
      source: rejection.source,
      receivedAt: rejection.receivedAt.toISOString(),
      rejectedAt: rejection.rejectedAt.toISOString(),
      score: aggregate === null || !board ? null : unscale(aggregate, board.decimals),
      payload: rejection.payload,
    };
  }
  const archived = await archivedMonthOf(ctx.db, boardId, key);
  if (archived)
    throw new NotFound(
      `the event with idempotency key "${key}" on board "${boardId}" was archived with the ledger of ${archived}`,
    );
  throw missing();
}
