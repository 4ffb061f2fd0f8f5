import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createSumBoard, startDeployment, verifyCli, type Deployment } from '../support/deployment.js';

/**
 * The cache is right or it is not used, across releases. A process of 0.2.0 (whose member
 * state was one hash per category, `:s:<category>`) still writing during a rolling upgrade
 * takes the cache out of use until it stops, and then the new release rebuilds and verifies
 * by itself; a Redis in a key layout this release does not know is neither read nor written.
 * The 0.2.0 writer is played by the test: its traces are the state hash it writes and an
 * entry in the sorted set that this release did not write.
 */
let d: Deployment;
let redis: Redis;
const base = 'chaos:lb:{roll|all}';

async function standings(): Promise<{ source: string; entries: Array<[string, number]> }> {
  const res = await d.api('GET', '/v1/boards/roll/standings?period=all&limit=50');
  expect(res.status).toBe(200);
  return {
    source: res.body.source,
    entries: res.body.entries.map((e: { member: string; score: number }) => [e.member, e.score]),
  };
}

async function post(key: string, member: string, value: number): Promise<void> {
  const res = await d.api('POST', '/v1/events?wait=true', { board: 'roll', member, value, idempotencyKey: key });
  expect(res.status).toBe(200);
}

async function eventually<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The aggregates as Postgres holds them, best first (the board ties by member id). */
async function inPostgres(): Promise<Array<[string, number]>> {
  const { rows } = await d.pg.query<{ member: string; value: string }>(
    `SELECT member_id AS member, value::text FROM member_aggregates
     WHERE board_id = 'roll' AND category = 'all' ORDER BY value DESC, member_id`,
  );
  return rows.map((r) => [r.member, Number(r.value)]);
}

/** What a 0.2.0 worker leaves in a period: its state hash, and an entry this release did not write. */
async function writeAs020(member: string, score: number): Promise<void> {
  await redis.hset(`${base}:s:all`, member, `9|${score}`);
  // Descending boards sort by the negated score.
  await redis.zadd(`${base}:z:all:world`, String(-score), member);
}

beforeAll(async () => {
  d = await startDeployment({ webs: 1, workers: 1, env: { LAYOUT_CHECK_MS: '200', LAYOUT_QUIET_MS: '3000' } });
  redis = new Redis(d.leaderboardRedis.url);
  await createSumBoard(d, 'roll');
});
afterAll(async () => {
  redis?.disconnect();
  await d?.close();
});

describe('leaderboard key layout', () => {
  it('a 0.2.0 writer takes the cache out of use; after it stops the release rebuilds and verifies by itself', async () => {
    await post('roll-1', 'ann', 30);
    await post('roll-2', 'bob', 20);
    await post('roll-3', 'cy', 10);
    expect(await standings()).toEqual({
      source: 'cache',
      entries: [
        ['ann', 30],
        ['bob', 20],
        ['cy', 10],
      ],
    });

    // The 0.2.0 worker writes for a while, beside this release's projections.
    const expected: Array<[string, number]> = [
      ['ann', 30],
      ['bob', 26],
      ['cy', 10],
    ];
    for (let i = 0; i < 3; i += 1) {
      await writeAs020('cy', 99);
      await post(`roll-bob-${i}`, 'bob', 2);
      // Once its write is seen (at this release's next projection there), answers come from Postgres, right.
      const read = await eventually('answers from Postgres', standings, (r) => r.source === 'database', 5000);
      expect(read.entries).toEqual(await inPostgres());
    }
    expect(await inPostgres()).toEqual(expected);
    expect((await d.api('GET', '/readyz')).body.status).toBe('ready');

    // It stops: after the quiet interval one worker hands over, with no manual step.
    const done = await d.workers[0]!.waitForLog((l) => /key layout handover done/.test(String(l.msg)), 60_000);
    expect(done.msg).toBe('key layout handover done: Redis verified against Postgres');
    expect(done.differences).toBe(0);
    expect(await redis.exists(`${base}:s:all`)).toBe(0);
    const after = await eventually('standings from the cache', standings, (s) => s.source === 'cache');
    expect(after.entries).toEqual(expected);
    expect(await redis.zscore(`${base}:z:all:world`, 'cy')).toBe('-10');
    expect((await verifyCli(d, 'roll')).ok).toBe(true);
  }, 120_000);

  it('a Redis in a key layout this release does not know is neither read nor written; events wait', async () => {
    await redis.set('chaos:lb:{layout}:version', '99');
    await d.workers[0]!.waitForLog((l) => /key layout this release does not know/.test(String(l.msg)), 10_000);
    const ready = await eventually(
      'web readiness naming the layout',
      async () => (await d.api('GET', '/readyz')).body,
      (b) => b.status === 'degraded',
    );
    expect(ready.failing).toEqual(['leaderboard-layout']);

    const accepted = await d.api('POST', '/v1/events', {
      board: 'roll',
      member: 'cy',
      value: 50,
      idempotencyKey: 'roll-foreign',
    });
    expect(accepted.status).toBe(202);
    await new Promise((r) => setTimeout(r, 1500));
    // The worker takes no job: the event waits in the queue, nothing is written to Redis.
    expect((await d.api('GET', '/v1/events/roll-foreign')).body.status).toBe('pending');
    const during = await standings();
    expect(during.source).toBe('database');

    await redis.set('chaos:lb:{layout}:version', '2');
    await eventually(
      'the waiting event applied',
      async () => (await d.api('GET', '/v1/events/roll-foreign')).body.status,
      (s) => s === 'applied',
    );
    const back = await eventually('standings from the cache', standings, (s) => s.source === 'cache');
    expect(back.entries).toEqual([
      ['cy', 60],
      ['ann', 30],
      ['bob', 26],
    ]);
    expect((await d.api('GET', '/readyz')).body.status).toBe('ready');
  }, 60_000);

  it('a worker starting on a Redis that 0.2.0 used waits for the handover instead of trusting the cache', async () => {
    // 0.2.0's "Laurel was here" marker, and its state hash beside the current layout's.
    await redis.set('chaos:lb:instance', new Date().toISOString());
    await writeAs020('ann', 1);
    const worker = await d.startWorker({}, 'worker-after-020');
    await worker.waitForLog((l) => /was used by 0.2.0/.test(String(l.msg)), 10_000);
    // The web process hears of it at its next look at the layout record (LAYOUT_CHECK_MS).
    const during = await eventually('answers from Postgres', standings, (r) => r.source === 'database', 2000);
    expect(during.entries).toEqual(await inPostgres());
    const handovers = () =>
      d.workers.flatMap((w) => w.logs).filter((l) => /key layout handover done/.test(String(l.msg)));
    const before = handovers().length;
    await eventually(
      'a second handover',
      async () => handovers().length,
      (n) => n > before,
      60_000,
    );
    expect(handovers().at(-1)!.differences).toBe(0);
    const after = await eventually('standings from the cache', standings, (r) => r.source === 'cache');
    expect(after.entries).toEqual(await inPostgres());
    expect(after.entries.find(([member]) => member === 'ann')).toEqual(['ann', 30]);
    expect(await redis.exists('chaos:lb:instance')).toBe(0);
  }, 90_000);
});
