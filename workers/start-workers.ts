import { Worker } from 'bullmq';
import type { AppContext } from '../src/context.js';
import { createWorkerRedis, onConnectionError, queueTarget } from '../src/storage/redis/connections.js';
import { SCORE_EVENTS_QUEUE, queuePrefix, type ScoreJob, type ScoreJobResult } from '../src/queue/score-events-queue.js';
import { cappedExponentialBackoff } from './backoff.js';
import { processScoreJob } from './score-processor.js';
import { processRebuildRequest, processScopeRebuild } from './rebuild-processor.js';
import { REBUILD_QUEUE } from '../src/queue/rebuild-queue.js';
import { PERIODS_QUEUE, registerSchedulers } from '../src/queue/periods-queue.js';
import { WEBHOOKS_QUEUE } from '../src/queue/webhooks-queue.js';
import { runTick } from './period-tick.js';
import { computeRollups } from './rollups-processor.js';
import { deliverWebhook } from './webhook-processor.js';
import { processMemberReprojection } from './member-reprojection.js';

export interface RunningWorkers {
  workers: Worker[];
  close(): Promise<void>;
}

/** Starts a BullMQ worker for every queue Laurel has. */
export function startWorkers(
  ctx: AppContext,
  options: { concurrency?: number; rebuildConcurrency?: number; schedulers?: boolean } = {},
): RunningWorkers {
  const connection = createWorkerRedis(queueTarget(ctx.env), 'laurel-worker');
  onConnectionError(connection, (err) => ctx.failures.warn('queue-redis', err, 'worker redis connection error'));
  // Every job here is safe to run again, so a job whose worker died is taken over several
  // times (BullMQ's default fails it on its second stall, leaving a 202 unapplied); bounded,
  // so a job that kills every worker that takes it (out of memory, say) ends up failed.
  const takeOver = { lockDuration: ctx.env.JOB_LOCK_MS, stalledInterval: ctx.env.JOB_LOCK_MS, maxStalledCount: 10 };

  const score = new Worker<ScoreJob, ScoreJobResult>(
    SCORE_EVENTS_QUEUE,
    (job) => processScoreJob(ctx, job.data, job.id),
    {
      connection,
      prefix: queuePrefix(ctx.env.REDIS_PREFIX, SCORE_EVENTS_QUEUE),
      concurrency: options.concurrency ?? ctx.env.WORKER_CONCURRENCY,
      ...takeOver,
      settings: { backoffStrategy: cappedExponentialBackoff },
    },
  );
  score.on('failed', (job, err) =>
    ctx.log.warn({ jobId: job?.id, attemptsMade: job?.attemptsMade, err: err.message }, 'score job failed; it will be retried'),
  );
  score.on('error', (err) => ctx.failures.warn('queue-redis', err, 'score worker error'));

  const rebuild = new Worker(
    REBUILD_QUEUE,
    async (job) => {
      if (job.name === 'request') return processRebuildRequest(job);
      if (job.name === 'member') return processMemberReprojection(ctx, job.data);
      return processScopeRebuild(ctx, job.data, (progress) => job.updateProgress(progress));
    },
    {
      connection,
      prefix: queuePrefix(ctx.env.REDIS_PREFIX, REBUILD_QUEUE),
      concurrency: options.rebuildConcurrency ?? 2,
      ...takeOver,
      settings: { backoffStrategy: cappedExponentialBackoff },
    },
  );
  rebuild.on('failed', (job, err) => ctx.log.warn({ jobId: job?.id, name: job?.name, err: err.message }, 'rebuild job failed'));
  rebuild.on('error', (err) => ctx.failures.warn('queue-redis', err, 'rebuild worker error'));

  const periods = new Worker(
    PERIODS_QUEUE,
    async (job) => (job.name === 'tick' ? runTick(ctx) : computeRollups(ctx)),
    { connection, prefix: queuePrefix(ctx.env.REDIS_PREFIX, PERIODS_QUEUE), concurrency: 1, ...takeOver },
  );
  periods.on('failed', (job, err) => ctx.log.warn({ jobId: job?.id, name: job?.name, err: err.message }, 'periods job failed'));
  periods.on('error', (err) => ctx.failures.warn('queue-redis', err, 'periods worker error'));

  const webhooks = new Worker(WEBHOOKS_QUEUE, async (job) => deliverWebhook(ctx, job.data), {
    connection,
    prefix: queuePrefix(ctx.env.REDIS_PREFIX, WEBHOOKS_QUEUE),
    concurrency: 8,
    ...takeOver,
    settings: { backoffStrategy: cappedExponentialBackoff },
  });
  webhooks.on('failed', (job, err) => ctx.log.warn({ jobId: job?.id, attemptsMade: job?.attemptsMade, err: err.message }, 'webhook delivery failed; it will be retried'));
  webhooks.on('error', (err) => ctx.failures.warn('queue-redis', err, 'webhooks worker error'));

  if (options.schedulers !== false) {
    registerSchedulers(ctx.periodsQueue).catch((err: Error) => ctx.log.error({ err: err.message }, 'could not register job schedulers'));
  }

  const workers: Worker[] = [score, rebuild, periods, webhooks];
  return {
    workers,
    async close() {
      // With the queue Redis unreachable no job can finish or give back its lock anyway (the
      // lock expires and another worker takes the job over): waiting would only run into the
      // shutdown timeout.
      const reachable = connection.status === 'ready';
      if (!reachable) connection.disconnect();
      await Promise.all(workers.map((w) => w.close(!reachable)));
      connection.disconnect();
    },
  };
}
