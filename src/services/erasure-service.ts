import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { NotFound, Unavailable } from '../domain/errors.js';
import { erasureJobOptions, type ErasureJob } from '../queue/rebuild-queue.js';
import { deleteErasure, findErasure, insertErasure, memberExists } from '../storage/postgres/erasure-repository.js';
import { assertMemberId } from './member-id.js';

/** What the erasure record keeps instead of the member id. */
export function memberHash(member: string): string {
  return createHash('sha256').update(member, 'utf8').digest('hex');
}

/**
 * DELETE /v1/members/{id} (docs/api.md, Erasure): records the erasure (hash of the id, the pseudonym its
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
    memberHash: memberHash(member),
    pseudonym: `erased:${randomBytes(6).toString('hex')}`,
    requestedAt: ctx.clock.now(),
  });
  const data: ErasureJob = { erasureId, member };
  try {
    await ctx.rebuildQueue.add('erase', data, { ...erasureJobOptions, jobId: erasureId });
  } catch (err) {
    await deleteErasure(ctx.db, erasureId);
    ctx.log.warn({ erasureId, err: (err as Error).message }, 'erasure not queued');
    throw new Unavailable('the erasure could not be queued; nothing was changed: retry');
  }
  ctx.log.info({ erasureId }, 'erasure requested');
  return { erasureId };
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
