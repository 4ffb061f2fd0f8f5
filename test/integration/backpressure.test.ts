import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { TEST_REDIS_CLUSTER, TEST_REDIS_URL } from '../support/databases.js';
import { startWorkers, type RunningWorkers } from '../../src/jobs/start-workers.js';
import { OutOfMemory } from '../../src/domain/errors.js';

const MAXMEMORY = 12 * 1024 * 1024;

let queueRedis: PrivateRedis;
let probe: Redis;
let h: Harness;
let workers: RunningWorkers | null = null;
beforeAll(async () => {
  queueRedis = await startPrivateRedis({ persistent: true });
  probe = new Redis(queueRedis.url);
  await probe.config('SET', 'maxmemory', String(MAXMEMORY));
  await probe.config('SET', 'maxmemory-policy', 'noeviction');
  // No workers at first: nothing drains the queue, so it fills. QUEUE_MEMORY_REFUSE_RATIO is
  // left at its default (0.9).
  h = await createHarness({
    workers: false,
    env: {
      REDIS_URL: queueRedis.url,
      REDIS_CLUSTER: 'false',
      LEADERBOARD_REDIS_URL: TEST_REDIS_URL,
      LEADERBOARD_REDIS_CLUSTER: String(TEST_REDIS_CLUSTER),
    },
  });
});
afterAll(async () => {
  await workers?.close();
  await h.close();
  probe.disconnect();
  await queueRedis.stop();
});

describe('intake backpressure on the queue Redis memory', () => {
  it('answers 503 with Retry-After before the queue Redis refuses writes; every 202 is applied, nothing is lost', async () => {
    await h.api('PUT', '/v1/boards/flood', { aggregation: 'sum', period: 'all' });
    const metadata = { blob: 'x'.repeat(1500) };
    const accepted: string[] = [];
    const statuses = new Map<number, number>();
    const refusals: Array<{ status: number; headers: Headers; body: any }> = [];
    // Rounds of 4 batches at once, of 100 events with 1.5 KB of metadata each (about 170 KB a
    // job), until refused: posts that overlap must not overrun the guard between readings.
    const CONCURRENT = 4;
    for (let round = 0; round < 60 && refusals.length === 0; round += 1) {
      await Promise.all(
        Array.from({ length: CONCURRENT }, async (_, j) => {
          const keys = Array.from({ length: 100 }, (_, i) => `flood-${round}-${j}-${i}`);
          const res = await h.api('POST', '/v1/events', {
            events: keys.map((k, i) => ({
              board: 'flood',
              member: `p${i % 37}`,
              value: 1,
              idempotencyKey: k,
              metadata,
            })),
          });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 202) accepted.push(...keys);
          else refusals.push(res);
        }),
      );
    }
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) {
      expect(refusal.status).toBe(503);
      expect(refusal.headers.get('retry-after')).toBe('5');
      expect(refusal.body).toMatchObject({ error: 'unavailable' });
      // The guard's own refusal, not Redis' OOM answer passed on ("queue Redis out of memory").
      expect(refusal.body.message).toMatch(/% of its memory limit/);
    }
    expect([...statuses.keys()].sort()).toEqual([202, 503]);
    // Redis itself refused no write: its error counts hold no OOM (and do count errors: one is made here).
    await expect(probe.call('LAUREL-NO-SUCH-COMMAND')).rejects.toThrow();
    const errorstats = await probe.info('errorstats');
    expect(errorstats).toMatch(/^errorstat_ERR:count=\d+/m);
    expect(errorstats).not.toMatch(/errorstat_OOM/);
    expect(accepted.length).toBeGreaterThan(0);
    const info = await probe.info('memory');
    expect(Number(/^used_memory:(\d+)/m.exec(info)![1])).toBeLessThan(MAXMEMORY);

    // The metric shows the pressure.
    const metrics = await (
      await fetch(`${h.baseUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
    ).text();
    expect(metrics).toMatch(/laurel_queue_redis_memory_bytes\{kind="max"\} 12582912/);
    expect(metrics).toMatch(/laurel_queue_jobs\{queue="score-events",state="waiting"\} [1-9]/);

    // Should Redis refuse all the same, storage recognises its OOM answer (not by the text a
    // service sees): a limit below what it holds makes the queue Redis refuse the next write.
    await probe.config('SET', 'maxmemory', String(1024 * 1024));
    const oom = await h.ctx.queueRedis.set(`${h.ctx.env.REDIS_PREFIX}:oom-probe`, 'x').catch((err: unknown) => err);
    await probe.config('SET', 'maxmemory', String(MAXMEMORY));
    expect(h.ctx.failureOf(oom)).toBeInstanceOf(OutOfMemory);

    // Workers drain the queue: every accepted event is in the ledger, once.
    workers = startWorkers(h.ctx, { concurrency: 2, schedulers: false });
    await h.drain(120_000);
    const rows = await h.ctx.db
      .selectFrom('score_events')
      .select('idempotency_key')
      .where('board_id', '=', 'flood')
      .execute();
    expect(rows.map((r) => r.idempotency_key).sort()).toEqual([...accepted].sort());
    const total = await h.api('GET', '/v1/boards/flood/standings?limit=200');
    expect(total.body.entries.reduce((n: number, e: { score: number }) => n + e.score, 0)).toBe(accepted.length);
  });
});
