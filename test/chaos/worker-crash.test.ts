import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import {
  ADMIN_KEY,
  CONSISTENT,
  createSumBoard,
  makeBatches,
  postSteadily,
  settleAndCheck,
  startDeployment,
  type Deployment,
} from '../support/deployment.js';
import { referenceStandings } from '../support/reference.js';
import { until } from '../support/poll.js';
import { queuePrefix } from '../../src/queue/enqueue.js';
import {
  requestsOf,
  SCORE_EVENTS_QUEUE,
  type ScoreJob,
  type ScoreJobResult,
} from '../../src/queue/score-events-queue.js';

let d: Deployment;
beforeAll(async () => {
  d = await startDeployment({ workers: 1 });
});
afterAll(() => d?.close());

describe('a worker process is SIGKILLed in the middle of a batch', () => {
  it('between the Postgres commit and the Redis projection: another worker finishes the batch once', async () => {
    await createSumBoard(d, 'crash-after-commit');
    // This worker holds every batch it takes right after its commit; it dies there.
    const victim = await d.startWorker({ LAUREL_FAULT_PAUSE_AFTER_COMMIT_MS: '600000' }, 'victim');
    const batches = makeBatches('crash-after-commit', 3000, 100, 11);
    const posting = postSteadily(d.baseUrl, batches, { paceMs: 20 });
    const held = await victim.waitForLog((l) => l.fault === 'paused-after-commit', 60_000);
    expect(held.jobId).toBeTruthy();
    await victim.stop('SIGKILL');
    await posting;

    expect(await settleAndCheck(d, 'crash-after-commit', batches)).toMatchObject(CONSISTENT);
  });

  it('at any moment of a busy stream (inside the Postgres transaction too): nothing lost, nothing doubled', async () => {
    await createSumBoard(d, 'crash-anywhere');
    const batches = makeBatches('crash-anywhere', 6000, 200, 12);
    let victim = await d.startWorker({}, 'busy-victim');
    await postSteadily(d.baseUrl, batches, {
      paceMs: 5,
      onAccepted: async (n) => {
        // Kill while batches are being applied, then again after a replacement has started.
        if (n === 8 || n === 20) {
          await victim.stop('SIGKILL');
          victim = await d.startWorker({}, `replacement-${n}`);
        }
      },
    });

    expect(await settleAndCheck(d, 'crash-anywhere', batches)).toMatchObject(CONSISTENT);
  });
});

describe('a worker process is SIGKILLed while it holds group jobs', () => {
  it('after their commit: every job comes back, every event counts once, each request reports its own event', async () => {
    await createSumBoard(d, 'crash-grouped');
    // No other worker takes jobs meanwhile: the queue fills with one-event requests.
    for (const w of d.workers.splice(0)) await w.stop('SIGTERM');
    // A member each: a member's requests never share a call (they go to later rounds), and the
    // victim must commit all of a job in its one call before it pauses.
    const events = makeBatches('crash-grouped', 240, 1, 13).map(([e], i) => ({
      ...e!,
      member: `c${String(i).padStart(3, '0')}`,
    }));
    // ?wait=true: each answers 202 with its job id once its 5 s are up, nothing having run it.
    // Posted at once, the requests share a few group jobs (intake's group commit).
    const answers = await Promise.all(
      events.map(async (event) => {
        const res = await fetch(`${d.baseUrl}/v1/events?wait=true`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify(event),
        });
        expect(res.status).toBe(202);
        return (await res.json()) as { jobId: string };
      }),
    );

    // The victim takes every group job at once, commits each, and holds them.
    const victim = await d.startWorker(
      { LAUREL_FAULT_PAUSE_AFTER_COMMIT_MS: '600000', WORKER_CONCURRENCY: '256' },
      'group-victim',
    );
    const redis = new Redis(d.queueRedis.url);
    const queue = new Queue<ScoreJob, ScoreJobResult>(SCORE_EVENTS_QUEUE, {
      connection: redis,
      prefix: queuePrefix(d.env.REDIS_PREFIX!, SCORE_EVENTS_QUEUE),
    });
    try {
      for (;;) {
        const { rows } = await d.pg.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM score_events WHERE board_id = 'crash-grouped'",
        );
        if (rows[0]!.n === events.length) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      // Fewer jobs than requests: requests shared groups. The victim holds every one of them.
      const jobs = new Set(answers.map((a) => a.jobId));
      expect(jobs.size).toBeLessThan(events.length);
      expect(await queue.getJobCounts('active', 'waiting')).toEqual({ active: jobs.size, waiting: 0 });
      expect((await victim.waitForLog((l) => l.fault === 'paused-after-commit')).jobId).toBeTruthy();
      await victim.stop('SIGKILL');
      // The period tick may have created this period ahead of the first event, marked complete
      // in Redis while empty; the victim's commits were never projected there. Retried jobs
      // would then rank against that partial copy (the lag between a commit and its projection)
      // and report ranks below the final ones. Without the mark, they rank from Postgres until
      // a rebuild swaps a complete copy in, so each job's rank is the final one.
      const leaderboard = new Redis(d.leaderboardRedis.url);
      await leaderboard.del(`${d.env.REDIS_PREFIX!}:lb:{crash-grouped|all}:ok`);
      leaderboard.disconnect();

      await d.startWorker({}, 'after-group-crash');
      expect(await settleAndCheck(d, 'crash-grouped', [events])).toMatchObject(CONSISTENT);

      // Each request of a job run again gets its own event back: already in the ledger (a
      // duplicate), with the member's score and rank now, as a lone retried request does.
      const expected = new Map(
        referenceStandings(
          events.map((e, i) => ({ key: e.idempotencyKey, member: e.member, units: e.value, atMs: i })),
          { aggregation: 'sum', order: 'desc', tieBreak: 'member' },
        ).map((s) => [s.member, s]),
      );
      // The ledger is settled once the first retries ran; the last held jobs may still be in their retry.
      await until(
        'every held job completed again',
        async () =>
          ((await queue.getJobCounts('active', 'waiting', 'delayed')).active === 0 &&
            ((await queue.getJobCounts('completed')).completed ?? 0) >= jobs.size) ||
          undefined,
        { timeoutMs: 120_000, everyMs: 250 },
      );
      for (const [i, { jobId }] of answers.entries()) {
        const job = await queue.getJob(jobId);
        expect(await job?.getState(), jobId).toBe('completed');
        const mine = expected.get(events[i]!.member)!;
        // Results name no event (they stay in the queue for hours): the request's place in the
        // job says which results are its own.
        const place = requestsOf(job!.data).findIndex((r) =>
          r.events.some((e) => e.posted.idempotencyKey === events[i]!.idempotencyKey),
        );
        expect(place, jobId).toBeGreaterThanOrEqual(0);
        expect(job!.returnvalue.requests?.[place]?.results).toEqual([
          expect.objectContaining({
            status: 'duplicate',
            period: 'all',
            score: mine.units,
            rank: mine.rank,
          }),
        ]);
      }
    } finally {
      await queue.close();
      redis.disconnect();
    }
  });
});
