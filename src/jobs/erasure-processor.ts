import { UnrecoverableError, type Job } from 'bullmq';
import type { AppContext } from '../context.js';
import type { ErasureJob } from '../queue/rebuild-queue.js';
import { eraseMember, markErasureFailed } from '../services/erasure-service.js';
import { asJobError } from './job-errors.js';

/** Erases the member (erasure-service.ts); once the last attempt fails, the erasure is marked failed. */
export async function processErasure(
  ctx: AppContext,
  { erasureId, member }: ErasureJob,
  job: Job,
): Promise<{ periods: number }> {
  try {
    return await eraseMember(ctx, erasureId, member);
  } catch (err) {
    const failure = asJobError(err);
    // Recording the failure is best effort: the job's own error is what BullMQ must see.
    if (failure instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
      await markErasureFailed(ctx, erasureId).catch(() => undefined);
    throw failure;
  }
}
