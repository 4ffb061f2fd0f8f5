import { z } from 'zod';
import type { AppContext } from '../context.js';
import { IDEMPOTENCY_KEY, isSafeText, REGION_CODE, UNSAFE_TEXT_MESSAGE, WORLD } from '../domain/ids.js';
import { conflict, HttpError, notFound, parseOrThrow } from '../http/errors.js';
import type { AggregateState } from '../storage/postgres/events-repository.js';
import { requestScopeRebuilds } from './rebuild-service.js';
import { memberJobSchema, type MemberJob } from '../queue/rebuild-queue.js';
import {
  bumpAllAggregates,
  exclusionHistory,
  findMember,
  lockEvent,
  lockMember,
  memberProjection,
  moveOpenAggregates,
  recordExclusion,
  recordRestore,
  updateMember,
  voidEventAndRecompute,
} from '../storage/postgres/moderation-repository.js';
import { lockPeriodShared } from '../storage/postgres/periods-repository.js';
import { assertMemberId } from './members-service.js';
import { retiredBefore } from '../domain/retention.js';

/**
 * Writes the new state of aggregates changed by a moderation action. The change is already
 * committed; if Redis is down the caller is told to repeat the (idempotent) request, which
 * projects the current state again.
 */
async function project(ctx: AppContext, aggregates: AggregateState[]): Promise<void> {
  try {
    const boards = await ctx.boards.getMany(aggregates.map((a) => a.board));
    requestScopeRebuilds(ctx, await ctx.leaderboard.project(aggregates, boards), 'moderation');
  } catch (err) {
    ctx.log.warn({ err: (err as Error).message }, 'moderation saved but not projected');
    throw new HttpError(503, 'unavailable', 'the change is saved, but rankings could not be updated now; repeat the request to update them');
  }
}

/**
 * Queued before the change commits (the queue Redis is durable), run a few seconds later:
 * if the process dies between the commit and its own projection, this still brings Redis
 * level with Postgres. When the inline projection worked it is a no-op (same versions).
 */
async function queueReprojection(ctx: AppContext, member: string, openOnly: boolean): Promise<void> {
  const data: MemberJob = { member, openOnly };
  await ctx.rebuildQueue.add('member', data, { delay: REPROJECT_DELAY_MS, deduplication: { id: `member|${member}` } });
}

const REPROJECT_DELAY_MS = 5000;

const retentionCutoff = (ctx: AppContext) => retiredBefore(ctx.clock.now(), ctx.env.CLOSED_PERIOD_CACHE_HOURS);

/** The job side of queueReprojection. */
export async function reprojectMember(ctx: AppContext, data: unknown): Promise<number> {
  const { member, openOnly } = memberJobSchema.parse(data);
  const states = await memberProjection(ctx.db, member, { openOnly, retiredBefore: retentionCutoff(ctx) });
  const boards = await ctx.boards.getMany(states.map((a) => a.board));
  requestScopeRebuilds(ctx, await ctx.leaderboard.project(states, boards), 'moderation');
  return states.length;
}

const memberSchema = z
  .object({
    displayName: z.string().min(1).max(100).refine(isSafeText, UNSAFE_TEXT_MESSAGE).nullable().optional(),
    region: z
      .string()
      .regex(REGION_CODE, 'must be an ISO 3166-1 alpha-2 code or match ^[A-Za-z0-9_-]{1,16}$')
      .refine((r) => r !== WORLD, '"world" is reserved')
      .nullable()
      .optional(),
  })
  .strict();

/**
 * Sets display name and region. A region change moves the member's entries of open
 * periods from the old region's scopes to the new one's, in one transaction with the
 * member locked, so the member is never in two regions or in none.
 */
export async function putMember(ctx: AppContext, memberId: string, body: unknown) {
  assertMemberId(memberId);
  const changes = parseOrThrow(memberSchema, body, 'member');
  const member = await ctx.db.transaction().execute(async (trx) => {
    const current = (await lockMember(trx, memberId, true))!;
    await updateMember(trx, memberId, changes);
    if (changes.region !== undefined && changes.region !== current.region) {
      await moveOpenAggregates(trx, memberId, changes.region);
      await queueReprojection(ctx, memberId, true);
    }
    return { ...current, ...changes };
  });
  await project(ctx, await memberProjection(ctx.db, memberId, { openOnly: true }));
  return memberView(member);
}

function memberView(m: { id: string; displayName?: string | null; region?: string | null; excludedAt: Date | null }) {
  return { member: m.id, displayName: m.displayName ?? null, region: m.region ?? null, excluded: m.excludedAt !== null };
}

/** The profile; the exclusion history (reasons, who excluded) only for admins. */
export async function memberProfile(ctx: AppContext, memberId: string, options: { admin: boolean }) {
  assertMemberId(memberId);
  const member = await findMember(ctx.db, memberId);
  if (!member) throw notFound(`member "${memberId}" not found`);
  if (!options.admin) return memberView(member);
  const history = await exclusionHistory(ctx.db, memberId);
  return {
    ...memberView(member),
    exclusions: history.map((e) => ({
      reason: e.reason,
      excludedBy: e.excluded_by,
      excludedAt: e.excluded_at.toISOString(),
      restoredBy: e.restored_by,
      restoredAt: e.restored_at?.toISOString() ?? null,
    })),
  };
}

const reasonSchema = z.object({ reason: z.string().trim().min(1).max(500).refine(isSafeText, UNSAFE_TEXT_MESSAGE) }).strict();

/**
 * Excludes a member: their events keep counting in Postgres, but every aggregate is
 * re-projected hidden, so they vanish at once from every standing and total.
 */
export async function excludeMember(ctx: AppContext, memberId: string, body: unknown, by: string) {
  assertMemberId(memberId);
  const { reason } = parseOrThrow(reasonSchema, body, 'exclusion');
  return setExcluded(ctx, memberId, by, { exclude: true, reason });
}

export async function restoreMember(ctx: AppContext, memberId: string, by: string) {
  assertMemberId(memberId);
  return setExcluded(ctx, memberId, by, { exclude: false });
}

/**
 * Excludes or restores under the member lock, bumps every aggregate of the member so the
 * new visibility wins in Redis, and projects it. Asking for the state the member is
 * already in changes nothing and only repeats the projection.
 */
async function setExcluded(ctx: AppContext, memberId: string, by: string, change: { exclude: true; reason: string } | { exclude: false }) {
  const member = await ctx.db.transaction().execute(async (trx) => {
    const current = await lockMember(trx, memberId, false);
    if (!current) throw notFound(`member "${memberId}" not found`);
    if ((current.excludedAt !== null) === change.exclude) return current;
    const at = ctx.clock.now();
    if (change.exclude) await recordExclusion(trx, memberId, change.reason, by, at);
    else await recordRestore(trx, memberId, by, at);
    await bumpAllAggregates(trx, memberId);
    await queueReprojection(ctx, memberId, false);
    ctx.log.info({ member: memberId, by }, change.exclude ? 'member excluded' : 'member restored');
    return { ...current, excludedAt: change.exclude ? at : null };
  });
  await project(ctx, await memberProjection(ctx.db, memberId, { openOnly: false, retiredBefore: retentionCutoff(ctx) }));
  return memberView(member);
}

/**
 * Voids an event: it stays in the ledger with its reason, and its member's aggregates of
 * that period are recomputed from the remaining events (best and last included).
 */
export async function voidEvent(ctx: AppContext, key: string, body: unknown, by: string) {
  const { reason } = parseOrThrow(reasonSchema, body, 'void');
  if (!IDEMPOTENCY_KEY.test(key)) throw notFound(`no applied event with idempotency key "${key}"`);
  const outcome = await ctx.db.transaction().execute(async (trx) => {
    const event = await lockEvent(trx, key);
    if (!event) throw notFound(`no applied event with idempotency key "${key}"`);
    // FOR SHARE: closing and fromEvents recomputations wait for this void, and it for them.
    const period = await lockPeriodShared(trx, event.board_id, event.period_key);
    if (period?.state !== 'open') {
      throw conflict(`period "${event.period_key}" of board "${event.board_id}" is ${period?.state}; its results are final`);
    }
    // Already voided: nothing changes, the projection is only repeated.
    if (event.status === 'voided') return { member: event.member_id, reason: event.void_reason };
    await lockMember(trx, event.member_id, false);
    const ref = { key, board: event.board_id, period: event.period_key, member: event.member_id };
    try {
      await voidEventAndRecompute(trx, ref, reason, ctx.clock.now());
      await queueReprojection(ctx, event.member_id, true);
      ctx.log.info({ idempotencyKey: key, member: event.member_id, by }, 'event voided');
      return { member: event.member_id, reason };
    } catch (err) {
      if ((err as { code?: string }).code === '23514') {
        throw conflict('voiding this event would take the member aggregate beyond ±2^40');
      }
      throw err;
    }
  });
  await project(ctx, await memberProjection(ctx.db, outcome.member, { openOnly: true }));
  return { idempotencyKey: key, status: 'voided', reason: outcome.reason };
}
