import { createHash, createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Env } from '../config/env.js';
import type { AppContext } from '../context.js';
import { InvalidInput, NotFound, Unavailable } from '../domain/errors.js';
import { erasureJobOptions } from '../queue/rebuild-queue.js';
import { enqueue } from '../queue/enqueue.js';
import { forgetInEventStreams, removeQueuedCopies } from '../queue/member-copies.js';
import {
  deleteErasure,
  eraseMemberRows,
  findErasure,
  insertErasure,
  memberExists,
  setErasureState,
} from '../storage/postgres/erasure-repository.js';
import { assertMemberId } from './member-id.js';

const KEYED = 'hmac-sha256:';

/** The key of memberHash: ERASURE_HASH_SECRET, or one derived from ADMIN_API_KEY; never stored in Postgres. */
function memberHashKey(env: Pick<Env, 'ERASURE_HASH_SECRET' | 'ADMIN_API_KEY'>): Buffer {
  return (
    env.ERASURE_HASH_SECRET === undefined
      ? createHmac('sha256', env.ADMIN_API_KEY).update('laurel erasure member hash')
      : createHmac('sha256', env.ERASURE_HASH_SECRET)
  ).digest();
}

/**
 * What the erasure record keeps instead of the member id while its job may run:
 * `hmac-sha256:<hex>`, keyed with a secret of the environment, so a guessed id cannot be
 * tested against the database alone. The one place this hash is computed.
 */
export function memberHash(env: Pick<Env, 'ERASURE_HASH_SECRET' | 'ADMIN_API_KEY'>, member: string): string {
  return KEYED + createHmac('sha256', memberHashKey(env)).update(member, 'utf8').digest('hex');
}

/**
 * Whether the recorded hash is the member's. A record written by the previous release holds
 * the unkeyed SHA-256 (64 hex digits, no prefix): it is checked in that form until its job
 * is done, which drops it (migration 0021 dropped those of finished erasures).
 */
function isRecordedMember(env: Env, recorded: string, member: string): boolean {
  const expected = recorded.startsWith(KEYED)
    ? memberHash(env, member)
    : createHash('sha256').update(member, 'utf8').digest('hex');
  return expected.length === recorded.length && timingSafeEqual(Buffer.from(expected), Buffer.from(recorded));
}

/**
 * DELETE /v1/members/{id} (docs/api.md, Erasure): records the erasure (keyed hash of the id, the pseudonym its
 * closed results will carry: random, so it cannot be recomputed from the id) and queues its
 * job, whose id is the erasure id. Refused with 503, and nothing recorded, when the queue
 * cannot take it.
 */
export async function requestErasure(ctx: AppContext, member: string): Promise<{ erasureId: string }> {
  assertMemberId(member);
  if (!(await memberExists(ctx.db, member))) throw new NotFound(`member "${member}" not found`);
  const erasureId = randomUUID();
  await insertErasure(ctx.db, {
    id: erasureId,
    memberHash: memberHash(ctx.env, member),
    pseudonym: `erased:${randomBytes(6).toString('hex')}`,
    requestedAt: ctx.clock.now(),
  });
  try {
    await enqueue(ctx.rebuildQueue, 'erase', { erasureId, member }, { ...erasureJobOptions, jobId: erasureId });
  } catch (err) {
    await deleteErasure(ctx.db, erasureId);
    ctx.log.warn({ erasureId, err: (err as Error).message }, 'erasure not queued');
    throw new Unavailable('the erasure could not be queued; nothing was changed: retry');
  }
  ctx.log.info({ erasureId }, 'erasure requested');
  return { erasureId };
}

/**
 * A projection of the member's events committed just before the erasure took the member's
 * lock may reach Redis just after the erasure's first Redis pass: a second pass this much
 * later removes it.
 */
const SETTLE_MS = 1000;

/**
 * Erases a member (docs/api.md, Erasure), safe to run again at any step: Postgres first, in one
 * transaction that also records which periods' Redis keys held the member; then those
 * (from the record, so a retry after the commit still knows them); then the score and
 * rebuild jobs, and the queues' event stream entries, still holding the member's id in the
 * queue Redis. Logs name the erasure, never the member.
 */
export async function eraseMember(ctx: AppContext, erasureId: string, member: string): Promise<{ periods: number }> {
  const erasure = await findErasure(ctx.db, erasureId);
  if (!erasure) throw new Error(`erasure ${erasureId} not recorded yet`);
  // Done: the record no longer holds the hash (nothing links it to the id), and nothing is left to do.
  if (erasure.state === 'done') return { periods: 0 };
  if (erasure.memberHash === null) {
    // A failed erasure of the previous release: migration 0021 dropped its unkeyed hash.
    throw new InvalidInput(`erasure ${erasureId} keeps no member to check the job's against: request a new erasure`, [
      { path: 'member', message: 'no recorded member' },
    ]);
  }
  if (!isRecordedMember(ctx.env, erasure.memberHash, member)) {
    throw new InvalidInput(`erasure ${erasureId}: the job's member is not the recorded one`, [
      { path: 'member', message: 'not the recorded member' },
    ]);
  }
  const periods = erasure.redisPeriods ?? (await eraseMemberRows(ctx.db, erasureId, member, erasure.pseudonym));
  const boards = await ctx.boards.getMany(periods.map((p) => p.board));
  const inRedis = periods.flatMap((p) => {
    const board = boards.get(p.board);
    return board ? [{ board, period: p.period, closed: p.closed === true }] : [];
  });
  await ctx.leaderboard.erase(inRedis, member);
  await ctx.members.erased(member);
  await removeQueuedCopies(ctx, member);
  await sleep(SETTLE_MS);
  await ctx.leaderboard.erase(inRedis, member);
  await forgetInEventStreams(ctx.queueRedis, ctx, member);
  await setErasureState(ctx.db, erasureId, 'done', ctx.clock.now());
  ctx.log.info({ erasureId, periods: periods.length }, 'member erased');
  return { periods: periods.length };
}

/** The erasure will not be retried: its status says so (the member may be partly erased). */
export async function markErasureFailed(ctx: AppContext, erasureId: string): Promise<void> {
  await setErasureState(ctx.db, erasureId, 'failed', ctx.clock.now());
}

const erasureIdSchema = z.uuid();

export async function erasureStatus(ctx: AppContext, erasureId: string) {
  const row = erasureIdSchema.safeParse(erasureId).success ? await findErasure(ctx.db, erasureId) : undefined;
  if (!row) throw new NotFound(`erasure "${erasureId}" not found`);
  return {
    erasureId: row.id,
    state: row.state,
    requestedAt: row.requestedAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
  };
}
