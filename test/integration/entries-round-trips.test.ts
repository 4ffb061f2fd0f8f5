import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { until } from '../support/poll.js';

/**
 * The read targets: `?members=` (100 ids), `?member=`, goals and cutoffs are one Redis
 * round trip and no Postgres statement on a cached read. Counted, not timed: socket writes of the
 * leaderboard connection naming leaderboard keys (a pipeline or MULTI is one write) and every
 * pg query of the process.
 */

const MEMBERS = 300;
let h: Harness;
let redisWrites = 0;
let pgQueries = 0;

beforeAll(async () => {
  h = await createHarness();
  await h.api('PUT', '/v1/boards/rt', {
    aggregation: 'best',
    period: 'all',
    tieBreak: 'shared',
    subscore: { order: 'asc' },
  });
  const events = Array.from({ length: MEMBERS }, (_, i) => ({
    board: 'rt',
    member: `r${i}`,
    value: i % 17,
    subscore: i % 5,
    idempotencyKey: `rt-${i}`,
  }));
  for (let i = 0; i < events.length; i += 100) await h.postEvents(events.slice(i, i + 100), false);
  // A follow list for goals: members above r150 and below it.
  const following = { memberIds: Array.from({ length: 40 }, (_, i) => `r${i * 7}`) };
  expect((await h.api('PUT', '/v1/members/r150/following', following)).status).toBeLessThan(300);
  await h.drain();
  // Nothing else may talk to Postgres while counting: no worker, no scheduler.
  await h.workers?.close();
  // Display names are kept in memory once the member-change notices are received.
  await until('the member directory caching', async () => (h.ctx.members.caching ? true : undefined));
  const stream = (h.ctx.leaderboard.redis as unknown as { stream: { write: (...args: unknown[]) => boolean } }).stream;
  const write = stream.write.bind(stream);
  stream.write = (...args: unknown[]) => {
    // Admission's rate budget shares the connection in tests: only leaderboard keys count.
    if (String(args[0]).includes(':lb:')) redisWrites += 1;
    return write(...args);
  };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    pgQueries += 1;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
});
afterAll(() => h.close());

async function counted(path: string): Promise<{ body: any; redis: number; postgres: number }> {
  // The first read warms what a process keeps (scripts, display names); the second is counted.
  expect((await h.api('GET', path)).status).toBe(200);
  const [r0, p0] = [redisWrites, pgQueries];
  const res = await h.api('GET', path);
  expect(res.status).toBe(200);
  return { body: res.body, redis: redisWrites - r0, postgres: pgQueries - p0 };
}

describe('cached entries reads', () => {
  it('?members= with 100 ids: one Redis round trip, no Postgres', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `r${i * 3}`);
    const read = await counted(`/v1/boards/rt/standings?period=all&members=${ids.join(',')}`);
    expect(read.body.source).toBe('cache');
    expect(read.body.entries).toHaveLength(100);
    expect({ redis: read.redis, postgres: read.postgres }).toEqual({ redis: 1, postgres: 0 });
  });

  it('?member= with a page: one Redis round trip, no Postgres', async () => {
    const read = await counted('/v1/boards/rt/standings?period=all&limit=50&member=r42');
    expect(read.body.source).toBe('cache');
    expect(read.body.me).toMatchObject({ member: 'r42' });
    expect({ redis: read.redis, postgres: read.postgres }).toEqual({ redis: 1, postgres: 0 });
  });

  it('goals with a follow list and award tiers: one Redis round trip, no Postgres', async () => {
    const read = await counted('/v1/boards/rt/standings/r150/goals?period=all');
    expect(read.body.source).toBe('cache');
    expect(read.body.next).not.toBeNull();
    expect(read.body.following.length).toBeGreaterThan(0);
    expect(read.body.awards.length).toBeGreaterThan(0);
    expect({ redis: read.redis, postgres: read.postgres }).toEqual({ redis: 1, postgres: 0 });
  });

  it('cutoffs at 20 ranks and 20 percents: one Redis round trip, no Postgres', async () => {
    const ranks = Array.from({ length: 20 }, (_, i) => i * 17 + 1);
    const percents = Array.from({ length: 20 }, (_, i) => (i + 1) * 5);
    const read = await counted(
      `/v1/boards/rt/cutoffs?period=all&ranks=${ranks.join(',')}&percents=${percents.join(',')}`,
    );
    expect(read.body.source).toBe('cache');
    expect([read.body.ranks.length, read.body.percents.length]).toEqual([20, 20]);
    expect({ redis: read.redis, postgres: read.postgres }).toEqual({ redis: 1, postgres: 0 });
  });

  it('counts what it claims: ?metadata=true costs one Postgres statement', async () => {
    const read = await counted('/v1/boards/rt/standings?period=all&limit=10&metadata=true');
    expect({ redis: read.redis, postgres: read.postgres }).toEqual({ redis: 1, postgres: 1 });
  });
});
