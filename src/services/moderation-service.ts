import { z } from 'zod';
import type { AppContext } from '../context.js';
import { boardOfKey } from './event-lookup.js';
import { IDEMPOTENCY_KEY, isSafeText, UNSAFE_TEXT_MESSAGE } from '../domain/ids.js';
import {
  bumpAllAggregates,
  lockEvent,
  lockMember,
  memberProjection,
  recordExclusion,
  recordRestore,
  voidEventsAndRecompute,
} from '../storage/postgres/moderation-repository.js';
import { lockPeriodShared } from '../storage/postgres/periods-repository.js';
import { assertMemberId } from './member-id.js';
import { project, queueReprojection } from './member-projection.js';
import { memberView } from './member-profile-service.js';
import { NotFound, Conflict } from '../domain/errors.js';
import { isValidBoardId } from '../domain/board.js';
import type { Db } from '../storage/postgres/database.js';
import { noPeriod, resolvePeriod } from './period-resolution.js';
import { parseOrThrow } from '../domain/validation.js';

const reasonText = z.string().trim().min(1).max(500).refine(isSafeText, UNSAFE_TEXT_MESSAGE);

export const reasonSchema = z.object({ reason: reasonText }).strict();

/** A restore's body is optional, and so is its reason (kept with the exclusion it ends). */
export const restoreSchema = z.object({ reason: reasonText.optional() }).strict();

/**
 * Excludes a member: their events keep counting in Postgres, but every aggregate is
 * re-projected hidden, so they vanish at once from every standing and total.
 */
export async function excludeMember(ctx: AppContext, memberId: string, body: unknown, by: string) {
  assertMemberId(memberId);
  const { reason } = parseOrThrow(reasonSchema, body, 'exclusion');
  return setExcluded(ctx, memberId, by, { exclude: true, reason });
}

export async function restoreMember(ctx: AppContext, memberId: string, body: unknown, by: string) {
  assertMemberId(memberId);
  const { reason } = parseOrThrow(restoreSchema, body ?? {}, 'restore');
  return setExcluded(ctx, memberId, by, { exclude: false, reason: reason ?? null });
}

/**
 * Excludes or restores under the member lock, bumps every aggregate of the member so the
 * new visibility wins in Redis, and projects it. Asking for the state the member is
 * already in changes nothing and only repeats the projection.
 */
async function setExcluded(
  ctx: AppContext,
  memberId: string,
  by: string,
  change: { exclude: true; reason: string } | { exclude: false; reason: string | null },
) {
  const member = await ctx.db.transaction().execute(async (trx) => {
    const current = await lockMember(trx, memberId, false);
    if (!current) throw new NotFound(`member "${memberId}" not found`);
    if ((current.excludedAt !== null) === change.exclude) return current;
    const at = ctx.clock.now();
    if (change.exclude) await recordExclusion(trx, memberId, change.reason, by, at);
    else await recordRestore(trx, memberId, change.reason, by, at);
    await bumpAllAggregates(trx, memberId);
    // Open periods only: a closed period's standings are final (docs/design/periods.md), so it answers the
    // same before its retirement (from Redis) as after (from its stored final results).
    await queueReprojection(ctx, memberId, true);
    ctx.log.info({ member: memberId, by }, change.exclude ? 'member excluded' : 'member restored');
    return { ...current, excludedAt: change.exclude ? at : null };
  });
  await project(ctx, await memberProjection(ctx.db, memberId, { openOnly: true }));
  return memberView(member);
}

/**
 * Voids an event: it stays in the ledger with its reason, and its member's aggregates of
 * that period are recomputed from the remaining events (best and last included).
 */
export async function voidEvent(
  ctx: AppContext,
  key: string,
  body: unknown,
  by: string,
  options: { board?: string } = {},
) {
  const { reason } = parseOrThrow(reasonSchema, body, 'void');
  if (!IDEMPOTENCY_KEY.test(key)) throw new NotFound(`no applied event with idempotency key "${key}"`);
  const boardId = await boardOfKey(ctx, key, options.board);
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    const event = await lockEvent(trx, boardId, key);
    if (!event) throw new NotFound(`no applied event with idempotency key "${key}" on board "${boardId}"`);
    const target = { board: event.board_id, period: event.period_key, member: event.member_id, key };
    await lockOpenPeriod(trx, target);
    // Already voided: nothing changes, the projection is only repeated.
    if (event.status === 'voided') return { member: event.member_id, reason: event.void_reason };
    await voidAndQueue(ctx, trx, target, reason);
    ctx.log.info({ idempotencyKey: key, member: event.member_id, by }, 'event voided');
    return { member: event.member_id, reason };
  });
  await project(ctx, await memberProjection(ctx.db, outcome.member, { openOnly: true }));
  return { idempotencyKey: key, board: boardId, status: 'voided', reason: outcome.reason };
}

export const removalQuerySchema = z.object({ period: z.string().max(32).default('current') }).strict();

/**
 * DELETE /v1/boards/{id}/members/{memberId}: voids every applied event of the member in one
 * period of one board, as voiding each would, in one transaction; the member leaves that
 * period's standings and keeps every other board and period.
 */
export async function removeMemberFromPeriod(
  ctx: AppContext,
  boardId: string,
  memberId: string,
  query: unknown,
  body: unknown,
  by: string,
): Promise<{ board: string; period: string; member: string; voided: number }> {
  assertMemberId(memberId);
  const { period: requested } = parseOrThrow(removalQuerySchema, query, 'query');
  const { reason } = parseOrThrow(reasonSchema, body, 'removal');
  const board = isValidBoardId(boardId) ? await ctx.boards.get(boardId) : undefined;
  if (!board) throw new NotFound(`board "${boardId}" not found`);
  const resolved = await resolvePeriod(ctx, board, requested);
  if (!resolved) throw noPeriod(board, requested);
  const target = { board: board.id, period: resolved.view.key, member: memberId };
  const voided = await ctx.db.transaction().execute(async (trx) => {
    if (!resolved.stored) return 0;
    await lockOpenPeriod(trx, target);
    if (!(await lockMember(trx, memberId, false))) throw new NotFound(`member "${memberId}" not found`);
    return voidAndQueue(ctx, trx, target, reason);
  });
  if (voided > 0) {
    ctx.log.info(
      { board: board.id, period: target.period, member: memberId, voided, by },
      'member removed from a period',
    );
    await project(ctx, await memberProjection(ctx.db, memberId, { openOnly: true }));
  }
  return { ...target, voided };
}

/** FOR SHARE: closing and fromEvents recomputations wait for a void, and it for them. A final period is a 409. */
async function lockOpenPeriod(trx: Db, target: { board: string; period: string }): Promise<void> {
  const period = await lockPeriodShared(trx, target.board, target.period);
  if (period?.state !== 'open') {
    throw new Conflict(
      `period "${target.period}" of board "${target.board}" is ${period?.state}; its results are final`,
    );
  }
}

/** The void itself, under the member's lock, and the member's re-projection queued with it. */
async function voidAndQueue(
  ctx: AppContext,
  trx: Db,
  target: { board: string; period: string; member: string; key?: string },
  reason: string,
): Promise<number> {
  await lockMember(trx, target.member, false);
  const voided = await voidEventsAndRecompute(trx, target, reason, ctx.clock.now());
  if (voided > 0) await queueReprojection(ctx, target.member, true);
  return voided;
}
