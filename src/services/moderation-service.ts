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
  voidEventAndRecompute,
} from '../storage/postgres/moderation-repository.js';
import { lockPeriodShared } from '../storage/postgres/periods-repository.js';
import { assertMemberId } from './member-id.js';
import { project, queueReprojection } from './member-projection.js';
import { memberView } from './member-profile-service.js';
import { NotFound, Conflict } from '../domain/errors.js';
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
    // FOR SHARE: closing and fromEvents recomputations wait for this void, and it for them.
    const period = await lockPeriodShared(trx, event.board_id, event.period_key);
    if (period?.state !== 'open') {
      throw new Conflict(
        `period "${event.period_key}" of board "${event.board_id}" is ${period?.state}; its results are final`,
      );
    }
    // Already voided: nothing changes, the projection is only repeated.
    if (event.status === 'voided') return { member: event.member_id, reason: event.void_reason };
    await lockMember(trx, event.member_id, false);
    const ref = { key, board: event.board_id, period: event.period_key, member: event.member_id };
    await voidEventAndRecompute(trx, ref, reason, ctx.clock.now());
    await queueReprojection(ctx, event.member_id, true);
    ctx.log.info({ idempotencyKey: key, member: event.member_id, by }, 'event voided');
    return { member: event.member_id, reason };
  });
  await project(ctx, await memberProjection(ctx.db, outcome.member, { openOnly: true }));
  return { idempotencyKey: key, board: boardId, status: 'voided', reason: outcome.reason };
}
