import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { until } from '../support/poll.js';
import { sweepFailedJobs, sweepable, MAX_STARTS_SWEPT } from '../../src/jobs/failed-job-sweeper.js';
import { startWorkers } from '../../src/jobs/start-workers.js';
import { queuePrefix } from '../../src/queue/enqueue.js';
import { createWorkerRedis, queueTarget } from '../../src/storage/redis/connections.js';

/**
 * A score job holds acknowledged events: one that failed without being at fault (its lock
 * expired too often while workers died) is put back by the sweeper; one refused for its
 * payload is not.
 */
let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false });
  expect((await h.api('PUT', '/v1/boards/sweep', { aggregation: 'sum', period: 'all' })).status).toBe(201);
});
afterAll(() => h.close());

/** Takes the next waiting score job by hand and fails it for good with `reason`, as BullMQ's stall check would. */
async function failNextJob(reason: string): Promise<Job> {
  const connection = createWorkerRedis(queueTarget(h.env), 'test-failer');
  const worker = new Worker('score-events', null, {
    connection,
    prefix: queuePrefix(h.env.REDIS_PREFIX, 'score-events'),
  });
  try {
    const token = 'test-token';
    const job = await worker.getNextJob(token);
    expect(job).toBeTruthy();
    await job.moveToFailed(new UnrecoverableError(reason), token);
    return job;
  } finally {
    await worker.close();
    connection.disconnect();
  }
}

describe('failed score jobs', () => {
  it('a job failed by stalls is put back and applied once; a refused one stays failed', async () => {
    const post = async (key: string) =>
      expect(
        (
          await h.api('POST', '/v1/events', {
            events: [{ board: 'sweep', member: 'ann', value: 5, idempotencyKey: key }],
          })
        ).status,
      ).toBe(202);
    await post('stalled-1');
    const stalled = await failNextJob('job stalled more than allowable limit');
    await post('refused-1');
    const refused = await failNextJob('job refused: text Postgres cannot store');
    expect(await h.ctx.scoreQueue.getFailedCount()).toBe(2);

    const workers = startWorkers(h.ctx, { concurrency: 1, schedulers: false });
    try {
      expect(await sweepFailedJobs(h.ctx, h.ctx.scoreQueue as never)).toBe(1);
      // A second sweep (or another process's) finds nothing more to put back.
      expect(await sweepFailedJobs(h.ctx, h.ctx.scoreQueue as never)).toBe(0);
      await until('the put-back job applied', async () =>
        (await h.api('GET', '/v1/events/stalled-1')).body?.status === 'applied' ? true : undefined,
      );
      expect(await h.ctx.scoreQueue.getJobState(stalled.id!)).toBe('completed');
      expect(await h.ctx.scoreQueue.getJobState(refused.id!)).toBe('failed');
      expect((await h.api('GET', '/v1/boards/sweep/standings/ann?period=all')).body.score).toBe(5);
    } finally {
      await workers.close();
    }
  });

  it('leaves failed a job out of attempts or started too often (one that kills every worker)', () => {
    const job = {
      failedReason: 'job stalled more than allowable limit',
      attemptsMade: 0,
      attemptsStarted: 3,
      opts: { attempts: 3000 },
    };
    expect(sweepable(job)).toBe(true);
    expect(sweepable({ ...job, attemptsMade: 3000 })).toBe(false);
    expect(sweepable({ ...job, attemptsStarted: MAX_STARTS_SWEPT })).toBe(false);
    expect(sweepable({ ...job, failedReason: 'invalid payload for job "apply" of queue "score-events": x' })).toBe(
      false,
    );
  });
});
