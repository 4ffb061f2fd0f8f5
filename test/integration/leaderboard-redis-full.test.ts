import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createHarness, type Harness } from '../support/harness.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';

/**
 * The cache is right or it is not used: when the leaderboard Redis refuses a projection (at
 * maxmemory with noeviction), the period is no longer claimed complete there, so reads are
 * answered from Postgres with the new scores, and the job that committed them still completes.
 */
let leaderboardRedis: PrivateRedis;
let probe: Redis;
let h: Harness;
beforeAll(async () => {
  leaderboardRedis = await startPrivateRedis();
  probe = new Redis(leaderboardRedis.url);
  await probe.config('SET', 'maxmemory-policy', 'noeviction');
  h = await createHarness({
    env: { LEADERBOARD_REDIS_URL: leaderboardRedis.url, LEADERBOARD_REDIS_CLUSTER: 'false' },
  });
  expect(
    (await h.api('PUT', '/v1/boards/full', { aggregation: 'sum', period: 'all', tieBreak: 'member' })).status,
  ).toBe(201);
});
afterAll(async () => {
  await h?.close();
  probe?.disconnect();
  await leaderboardRedis?.stop();
});

describe('leaderboard Redis out of memory', () => {
  it('a refused projection sends the period to Postgres: no stale answer is served from the cache', async () => {
    await h.postEvents([
      { board: 'full', member: 'ann', value: 10, idempotencyKey: 'full-1' },
      { board: 'full', member: 'bob', value: 5, idempotencyKey: 'full-2' },
    ]);
    const before = await h.api('GET', '/v1/boards/full/standings/bob?period=all');
    expect([before.body.rank, before.body.score, before.body.source]).toEqual([2, 5, 'cache']);

    // Every write now fails with OOM.
    const used = Number(/used_memory:(\d+)/.exec(await probe.info('memory'))![1]);
    await probe.config('SET', 'maxmemory', String(Math.max(1024 * 1024, Math.floor(used / 2))));
    const results = await h.postEvents([
      { board: 'full', member: 'bob', value: 20, idempotencyKey: 'full-3' },
      { board: 'full', member: 'cy', value: 1, idempotencyKey: 'full-4' },
    ]);
    expect(results.map((r: { status: string }) => r.status)).toEqual(['applied', 'applied']);

    const bob = await h.api('GET', '/v1/boards/full/standings/bob?period=all');
    expect([bob.body.rank, bob.body.score]).toEqual([1, 25]);
    expect(bob.body.source).not.toBe('cache');
    const top = await h.api('GET', '/v1/boards/full/standings?period=all&limit=10');
    expect(top.body.entries.map((e: { member: string; score: number }) => [e.member, e.score])).toEqual([
      ['bob', 25],
      ['ann', 10],
      ['cy', 1],
    ]);
    await probe.config('SET', 'maxmemory', '0');
  });
});
