import type { Job, Queue } from 'bullmq';
import type { AppContext } from '../context.js';

/** How often a worker process looks for failed score jobs to put back. */
export const SWEEP_INTERVAL_MS = 60_000;
/** A job started this many times (runs and takeovers together) is left failed: it is the job, not an outage. */
export const MAX_STARTS_SWEPT = 100;
const SWEEP_PAGE = 500;

/** What a job that failed for its own input says (src/jobs/job-errors.ts, job-registry.ts): retrying cannot help. */
const REFUSED = [/^job refused:/, /^invalid payload for job/, /^queue "[^"]*" has no job/];

/**
 * Whether a failed score job is put back. An outage never fails a job (it is delayed, see
 * job-registry.ts), but a job can still fail without being at fault: its lock expired too
 * often ("job stalled more than allowable limit") while workers were killed or frozen, or the
 * queue Redis went away while it failed. Such a job holds acknowledged events, so it is
 * retried; a refused payload, a job out of attempts, or one started MAX_STARTS_SWEPT times
 * (one that kills every worker that takes it) stays failed and the LaurelFailedJobs alert
 * fires.
 */
export function sweepable(job: Pick<Job, 'failedReason' | 'attemptsMade' | 'attemptsStarted' | 'opts'>): boolean {
  if (REFUSED.some((pattern) => pattern.test(job.failedReason ?? ''))) return false;
  if (job.attemptsMade >= (job.opts.attempts ?? 1)) return false;
  return job.attemptsStarted < MAX_STARTS_SWEPT;
}

/** Puts back every sweepable failed job of the queue; returns how many. Safe to run in several processes at once. */
export async function sweepFailedJobs(ctx: AppContext, queue: Queue): Promise<number> {
  let requeued = 0;
  for (let start = 0; ; start += SWEEP_PAGE) {
    const jobs = await queue.getFailed(start, start + SWEEP_PAGE - 1);
    for (const job of jobs.filter(sweepable)) {
      // Another process may have put it back first: then it is no longer failed.
      const retried = await job.retry('failed').then(
        () => true,
        () => false,
      );
      if (!retried) continue;
      requeued += 1;
      ctx.metrics.jobs.inc({ queue: queue.name, name: job.name, outcome: 'requeued' });
      ctx.log.warn(
        { queue: queue.name, jobId: job.id, name: job.name, failedReason: job.failedReason },
        'failed job put back to be retried',
      );
    }
    if (jobs.length < SWEEP_PAGE) return requeued;
  }
}
