import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { TEST_REDIS_CLUSTER, TEST_REDIS_URL } from '../support/databases.js';
import { startWorkers, type RunningWorkers } from '../../workers/start-workers.js';

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
  // No workers at first: nothing drains the queue, so it fills.
  h = await createHarness({
    workers: false,
    env: {
      REDIS_URL: queueRedis.url,
      REDIS_CLUSTER: 'false',
      LEADERBOARD_REDIS_URL: TEST_REDIS_URL,
      LEADERBOARD_REDIS_CLUSTER: String(TEST_REDIS_CLUSTER),
      QUEUE_MEMORY_REFUSE_RATIO: '0.6',
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
    let refusal: { status: number; headers: Headers; body: any } | null = null;
    // Batches of 100 events with 1.5 KB of metadata each (about 170 KB a job) until refused.
    for (let batch = 0; batch < 200 && !refusal; batch += 1) {
      const keys = Array.from({ length: 100 }, (_, i) => `flood-${batch}-${i}`);
      const res = await h.api('POST', '/v1/events', {
        events: keys.map((k, i) => ({ board: 'flood', member: `p${i % 37}`, value: 1, idempotencyKey: k, metadata })),
      });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 202) accepted.push(...keys);
      else refusal = res;
    }
    expect(refusal?.status).toBe(503);
    expect(refusal?.headers.get('retry-after')).toBe('5');
    expect(refusal?.body).toMatchObject({ error: 'unavailable' });
    expect(refusal?.body.message).toMatch(/queue is full/);
    // Nothing but 202 before the refusal: Redis itself never refused a write (that would be a 503 of another kind or a 500).
    expect([...statuses.keys()].sort()).toEqual([202, 503]);
    expect(accepted.length).toBeGreaterThan(0);
    const info = await probe.info('memory');
    expect(Number(/^used_memory:(\d+)/m.exec(info)![1])).toBeLessThan(MAXMEMORY);

    // The metric shows the pressure.
    const metrics = await (await fetch(`${h.baseUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text();
    expect(metrics).toMatch(/laurel_queue_redis_memory_bytes\{kind="max"\} 12582912/);
    expect(metrics).toMatch(/laurel_queue_jobs\{queue="score-events",state="waiting"\} [1-9]/);

    // Workers drain the queue: every accepted event is in the ledger, once.
    workers = startWorkers(h.ctx, { concurrency: 2, schedulers: false });
    await h.drain(120_000);
    const rows = await h.ctx.db.selectFrom('score_events').select('idempotency_key').where('board_id', '=', 'flood').execute();
    expect(rows.map((r) => r.idempotency_key).sort()).toEqual([...accepted].sort());
    const total = await h.api('GET', '/v1/boards/flood/standings?limit=200');
    expect(total.body.entries.reduce((n: number, e: { score: number }) => n + e.score, 0)).toBe(accepted.length);
  });
});
