import { Writable } from 'node:stream';
import type { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { JOB_HANDLERS } from '../../src/jobs/job-handlers.js';
import { buildJobRegistry, handler } from '../../src/jobs/job-registry.js';
import { startWorkers } from '../../src/jobs/start-workers.js';

/** Polls until the job has finished one way or the other (no QueueEvents needed). */
async function settled(queue: Queue, id: string, timeoutMs = 20_000): Promise<{ state: string; job: Job }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await queue.getJobState(id);
    // Read after the state: the job's hash is final once it is failed or completed.
    const job = state === 'failed' || state === 'completed' ? await queue.getJob(id) : undefined;
    if (job) return { state, job };
    if (Date.now() > deadline) throw new Error(`job ${id} still ${state}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('job registry: names, handlers and start-up', () => {
  it('accepts the handlers Laurel ships: one per job name of every queue', () => {
    const registry = buildJobRegistry(JOB_HANDLERS);
    const names = Object.fromEntries([...registry].map(([queue, jobs]) => [queue, [...jobs.keys()].sort()]));
    expect(names).toEqual({
      'score-events': ['apply'],
      rebuild: ['erase', 'member', 'request', 'scope'],
      periods: ['rollup', 'tick'],
      webhooks: ['member.period_report', 'period.closed'],
    });
  });

  it('refuses to start with a job name that has no handler, two handlers, or a handler for no job', () => {
    const withoutTick = JOB_HANDLERS.filter((h) => !(h.queue === 'periods' && h.name === 'tick'));
    expect(() => buildJobRegistry(withoutTick)).toThrow('job "tick" of queue "periods" has 0 handlers, not 1');
    const twice = [...JOB_HANDLERS, handler('rebuild', 'scope', async () => 'second')];
    expect(() => buildJobRegistry(twice)).toThrow('job "scope" of queue "rebuild" has 2 handlers, not 1');
    const stray = [
      ...JOB_HANDLERS,
      { queue: 'periods', name: 'compact', handle: async () => undefined } as unknown as (typeof JOB_HANDLERS)[number],
    ];
    expect(() => buildJobRegistry(stray)).toThrow(
      'a handler names job "compact" of queue "periods", which no contract declares',
    );
  });
});

describe('job registry: dispatch against real Redis', () => {
  let h: Harness;
  const lines: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    h = await createHarness({ logDestination: sink, env: { LOG_LEVEL: 'info' } });
    expect((await h.api('PUT', '/v1/boards/reg', { aggregation: 'sum' })).status).toBe(201);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('fails a job with an unknown name at once, and no other handler of its queue runs it', async () => {
    const periodsBefore = await h.ctx.db
      .selectFrom('periods')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    // Before the registry, any name but "tick" on this queue ran the rollups.
    // The contract's types refuse such a job; a producer of another release could still queue it.
    await (h.ctx.periodsQueue as Queue).add('compact', {}, { jobId: 'unknown-name' });
    const { state, job } = await settled(h.ctx.periodsQueue, 'unknown-name');
    expect(state).toBe('failed');
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toBe('queue "periods" has no job "compact"');
    const periodsAfter = await h.ctx.db
      .selectFrom('periods')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(periodsAfter.n)).toBe(Number(periodsBefore.n));
    expect(await h.ctx.db.selectFrom('rollups').selectAll().execute()).toEqual([]);

    // On the rebuild queue an unknown name used to become a scope rebuild.
    await (h.ctx.rebuildQueue as Queue).add(
      'refill',
      { board: 'reg', period: 'all', category: 'all' },
      { jobId: 'unknown-rebuild' },
    );
    expect((await settled(h.ctx.rebuildQueue, 'unknown-rebuild')).job.failedReason).toBe(
      'queue "rebuild" has no job "refill"',
    );
    expect(await h.ctx.db.selectFrom('rebuild_log').selectAll().execute()).toEqual([]);
  });

  it('fails a score job whose payload breaks its schema at once, naming the field, instead of retrying it for a day', async () => {
    await h.ctx.scoreQueue.add('apply', { events: [] }, { jobId: 'bad-payload' });
    const { state, job } = await settled(h.ctx.scoreQueue, 'bad-payload');
    expect(state).toBe('failed');
    expect(job.attemptsMade).toBe(1);
    expect(job.opts.attempts).toBe(3000);
    expect(job.failedReason).toMatch(/^invalid payload for job "apply" of queue "score-events": events: /);
  });

  it('logs each failure once in one shape and counts it by queue, name and outcome', async () => {
    // The worker logs a failure just after the job's state changes: wait for the three.
    const failuresLogged = () => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'job failed for good');
    for (let i = 0; i < 200 && failuresLogged().length < 3; i += 1) await new Promise((r) => setTimeout(r, 25));
    const failures = failuresLogged();
    expect(failures.map((l) => [l.queue, l.name, l.jobId, l.attemptsMade]).sort()).toEqual(
      [
        ['periods', 'compact', 'unknown-name', 1],
        ['rebuild', 'refill', 'unknown-rebuild', 1],
        ['score-events', 'apply', 'bad-payload', 1],
      ].sort(),
    );
    const counted = (await h.ctx.metrics.jobs.get()).values.filter((v) => v.labels.outcome === 'failed');
    expect(counted.map((v) => [v.labels.queue, v.labels.name, v.value]).sort()).toEqual(
      [
        ['periods', 'compact', 1],
        ['rebuild', 'refill', 1],
        ['score-events', 'apply', 1],
      ].sort(),
    );
  });
});

describe('job registry: every worker has the backoff strategies', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ workers: false });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('retries a failed periods job with capped-exponential backoff (it used to fail: "Unknown backoff strategy")', async () => {
    let runs = 0;
    const flakyTick = handler('periods', 'tick', async () => {
      runs += 1;
      if (runs === 1) throw new Error('Postgres is down (simulated)');
      return { created: 0, closed: [] };
    });
    const handlers = [...JOB_HANDLERS.filter((x) => !(x.queue === 'periods' && x.name === 'tick')), flakyTick];
    const workers = startWorkers(h.ctx, { schedulers: false, handlers });
    try {
      // The queue's default job options name the capped-exponential strategy.
      await h.ctx.periodsQueue.add('tick', {}, { jobId: 'flaky-tick' });
      const { state, job } = await settled(h.ctx.periodsQueue, 'flaky-tick');
      expect(job.failedReason ?? '').not.toContain('Unknown backoff strategy');
      expect(state).toBe('completed');
      expect(job.attemptsMade).toBe(2);
      expect(runs).toBe(2);
    } finally {
      await workers.close();
    }
  });
});
