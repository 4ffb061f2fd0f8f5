import { Worker, type Job, type Queue, type WorkerOptions } from 'bullmq';
import type { AppContext } from '../context.js';
import { Unavailable } from '../domain/errors.js';
import { createWorkerRedis, onConnectionError, queueTarget } from '../storage/redis/connections.js';
import { queuePrefix } from '../queue/enqueue.js';
import { registerSchedulers } from '../queue/periods-queue.js';
import type { QueueName } from '../queue/job-contracts.js';
import { cappedExponentialBackoff } from './backoff.js';
import { SWEEP_INTERVAL_MS, sweepFailedJobs } from './failed-job-sweeper.js';
import { JOB_HANDLERS } from './job-handlers.js';
import { buildJobRegistry, dispatcher, type JobHandler } from './job-registry.js';

export interface RunningWorkers {
  workers: Worker[];
  close(): Promise<void>;
}

export interface WorkerStartOptions {
  concurrency?: number;
  rebuildConcurrency?: number;
  schedulers?: boolean;
  /** The handlers to run (tests only); JOB_HANDLERS by default. */
  handlers?: readonly JobHandler[];
}

/**
 * Starts a BullMQ worker for every queue Laurel has. Throws before starting any when a job
 * name has no handler or two (see job-registry.ts).
 */
export function startWorkers(ctx: AppContext, options: WorkerStartOptions = {}): RunningWorkers {
  const registry = buildJobRegistry(options.handlers ?? JOB_HANDLERS);
  const concurrency: Record<QueueName, number> = {
    'score-events': options.concurrency ?? ctx.env.WORKER_CONCURRENCY,
    rebuild: options.rebuildConcurrency ?? 2,
    // One tick at a time: closing is safe to repeat, but two at once would only contend.
    periods: 1,
    webhooks: 8,
  };
  const connection = createWorkerRedis(queueTarget(ctx.env), 'laurel-worker');
  onConnectionError(connection, (err) => ctx.failures.warn('queue-redis', err, 'worker redis connection error'));
  const common: Omit<WorkerOptions, 'concurrency'> = {
    connection,
    // Every job here is safe to run again, so a job whose worker died is taken over several
    // times (BullMQ's default fails it on its second stall, leaving a 202 unapplied); bounded,
    // so a job that kills every worker that takes it (out of memory, say) ends up failed.
    lockDuration: ctx.env.JOB_LOCK_MS,
    stalledInterval: ctx.env.JOB_LOCK_MS,
    maxStalledCount: 10,
    // Every queue's jobs may name it, so every worker knows it.
    settings: { backoffStrategy: cappedExponentialBackoff },
  };

  const workers = (Object.keys(concurrency) as QueueName[]).map((queue) => {
    const worker: Worker = new Worker(queue, dispatcher(ctx, queue, registry), {
      ...common,
      prefix: queuePrefix(ctx.env.REDIS_PREFIX, queue),
      concurrency: concurrency[queue],
    });
    worker.on('completed', (job) => recordRun(ctx, queue, job, 'completed'));
    worker.on('failed', (job, err) => reportFailure(ctx, queue, job, err));
    worker.on('error', (err) => ctx.failures.warn('queue-redis', err, `${queue} worker error`));
    return worker;
  });

  if (options.schedulers !== false) {
    registerSchedulers(ctx.periodsQueue).catch((err: Error) =>
      ctx.log.error({ err: err.message }, 'could not register job schedulers'),
    );
  }

  // Score jobs hold acknowledged events: one that failed without being at fault is put back.
  const sweep = setInterval(() => {
    sweepFailedJobs(ctx, ctx.scoreQueue as unknown as Queue).catch((err: Error) =>
      ctx.failures.warn('queue-redis', err, 'could not sweep failed score jobs'),
    );
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  return {
    workers,
    async close() {
      clearInterval(sweep);
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

function recordRun(ctx: AppContext, queue: string, job: Job, outcome: 'completed' | 'retried' | 'failed'): void {
  ctx.metrics.jobs.inc({ queue, name: job.name, outcome });
  if (job.processedOn)
    ctx.metrics.jobDuration.observe({ queue, name: job.name }, (Date.now() - job.processedOn) / 1000);
}

/**
 * The one place a failed job run is logged and counted: a warning while BullMQ retries it,
 * an error once it has failed for good (out of attempts, or unrecoverable).
 */
function reportFailure(ctx: AppContext, queue: string, job: Job | undefined, err: Error): void {
  if (!job) {
    ctx.log.error({ queue, err: err.message }, 'job failed');
    return;
  }
  // BullMQ sets finishedOn only when the job moved to failed rather than back to be retried.
  const final = Boolean(job.finishedOn);
  recordRun(ctx, queue, job, final ? 'failed' : 'retried');
  const fields = { queue, jobId: job.id, name: job.name, attemptsMade: job.attemptsMade, err: err.message };
  if (final) {
    ctx.log.error(fields, 'job failed for good');
    return;
  }
  // While a dependency is down every job fails and is retried: one line per dependency per interval.
  const outage = ctx.failureOf(err);
  if (outage instanceof Unavailable)
    ctx.failures.warn(outage.dependency, err, 'job failed; it will be retried', {
      queue,
      jobId: job.id,
      name: job.name,
      attemptsMade: job.attemptsMade,
    });
  else ctx.log.warn(fields, 'job failed; it will be retried');
}
