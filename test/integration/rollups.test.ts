import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { computeRollups } from '../../src/services/rollups.js';
import { createHarness, type Harness } from '../support/harness.js';
import { until } from '../support/poll.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const DAY = 'from=2026-12-02T00:00:00Z&to=2026-12-03T00:00:00Z';
async function rollup(board: string, period = '2026-12') {
  await computeRollups(h.ctx);
  const res = await h.api('GET', `/v1/admin/stats?board=${board}&${DAY}`);
  expect(res.status).toBe(200);
  return res.body.rollups.find((r: { period: string }) => r.period === period);
}
const ev = (board: string, member: string, value: number, key: string, occurredAt?: string) => ({
  board,
  member,
  value,
  idempotencyKey: key,
  ...(occurredAt ? { occurredAt } : {}),
});

describe('rollups', () => {
  it('count applied, duplicates and every rejection reason apart, and distinct members', async () => {
    h.clock.set('2026-12-02T10:15:00Z');
    await h.api('PUT', '/v1/boards/ru', { aggregation: 'best', period: 'month', graceSeconds: 0, maxAttempts: 2 });
    const results = await h.postEvents([
      ev('ru', 'a', 1, 'ru-1'),
      ev('ru', 'b', 2, 'ru-2'),
      ev('ru', 'a', 1, 'ru-1'), // duplicate
      ev('ru', 'a', 9, 'ru-2'), // conflict: same key, other payload
      ev('ru', 'a', 3, 'ru-3'),
      ev('ru', 'a', 4, 'ru-4'), // a's third event: beyond maxAttempts 2
      ev('ru', 'c', 5, 'ru-5', '2026-11-30T10:00:00Z'), // November is over (no grace)
    ]);
    expect(results.map((r: { status: string; reason?: string }) => r.reason ?? r.status)).toEqual([
      'applied',
      'applied',
      'duplicate',
      'conflict',
      'applied',
      'attempts_exhausted',
      'period_closed',
    ]);
    await h.api('PUT', '/v1/boards/ru-cap', {
      aggregation: 'sum',
      period: 'month',
      maxMembers: 1,
      window: { startsAt: '2026-12-02T10:00:00Z' },
    });
    expect(
      (
        await h.postEvents([
          ev('ru-cap', 'a', 1, 'rc-1'),
          ev('ru-cap', 'b', 1, 'rc-2'),
          ev('ru-cap', 'c', 1, 'rc-3', '2026-12-02T09:59:59Z'),
        ])
      ).map((r: { status: string; reason?: string }) => r.reason ?? r.status),
    ).toEqual(['applied', 'board_full', 'outside_window']);
    // A voided event was applied: it stays counted, and the void is counted apart.
    expect((await h.api('POST', '/v1/events/ru-1/void?board=ru', { reason: 'test' })).status).toBe(200);

    expect(await rollup('ru')).toMatchObject({
      hour: '2026-12-02T10:00:00.000Z',
      applied: 3,
      duplicates: 1,
      members: 2,
      voids: 1,
      rejected: { periodClosed: 0, conflict: 1, outOfRange: 0, outsideWindow: 0, boardFull: 0, attemptsExhausted: 1 },
    });
    expect((await h.api('GET', `/v1/admin/stats?${DAY}`, undefined, null)).status).toBe(401);
    expect(await rollup('ru', '2026-11')).toMatchObject({ applied: 0, rejected: { periodClosed: 1 } });
    expect(await rollup('ru-cap')).toMatchObject({
      applied: 1,
      members: 1,
      rejected: { boardFull: 1, outsideWindow: 1, attemptsExhausted: 0, conflict: 0, periodClosed: 0 },
    });
  });

  it('measure the lag from receipt to visible in Redis, not to the commit', async () => {
    h.clock.set('2026-12-02T12:00:00Z');
    await h.api('PUT', '/v1/boards/ru-lag', { aggregation: 'sum', period: 'month' });
    // Between the commit and the projection the clock moves on: that time is part of the lag.
    let stall = 250;
    h.ctx.faults.afterCommit = () => h.clock.advance(stall);
    try {
      await h.postEvents(Array.from({ length: 98 }, (_, i) => ev('ru-lag', `m${i}`, 1, `lag-a${i}`)));
      stall = 4000;
      await h.postEvents([ev('ru-lag', 'm0', 1, 'lag-b0'), ev('ru-lag', 'm1', 1, 'lag-b1')]);
    } finally {
      delete h.ctx.faults.afterCommit;
    }
    // The commit itself took no time on this clock: a lag to the commit would read 0.
    const { rows } = await sql<{ lag: number }>`
      SELECT max(extract(epoch FROM applied_at - received_at))::float8 AS lag FROM score_events
       WHERE board_id = 'ru-lag'`.execute(h.ctx.db);
    expect(rows[0]!.lag).toBe(0);
    // 98 events visible 250 ms after receipt and 2 after 4 s: the 50th is 250, the 99th 4000.
    expect(await rollup('ru-lag')).toMatchObject({
      hour: '2026-12-02T12:00:00.000Z',
      applied: 100,
      members: 98,
      lagP50Ms: 250,
      lagP99Ms: 4000,
    });
  });

  it('count rebuilds and their time', async () => {
    h.clock.set('2026-12-02T13:00:00Z');
    await h.api('PUT', '/v1/boards/ru-rb', { aggregation: 'sum', period: 'month', categories: ['pvp'] });
    await h.postEvents([ev('ru-rb', 'a', 1, 'rb-1')]);
    const asked = await h.api('POST', '/v1/admin/rebuilds', { board: 'ru-rb', period: '2026-12' });
    expect(asked.status).toBe(202);
    await until('the rebuild', async () => {
      const status = await h.api('GET', `/v1/admin/rebuilds/${asked.body.rebuildId}`);
      return status.body.state === 'completed' ? true : undefined;
    });
    const { rows } = await sql<{ n: number; ms: number }>`
      SELECT count(*)::int AS n, sum(duration_ms)::float8 AS ms FROM rebuild_log WHERE board_id = 'ru-rb'`.execute(
      h.ctx.db,
    );
    // One scope per category: `all` and `pvp`.
    expect(rows[0]!.n).toBe(2);
    expect(await rollup('ru-rb')).toMatchObject({
      hour: '2026-12-02T13:00:00.000Z',
      applied: 1,
      rebuilds: 2,
      rebuildMs: rows[0]!.ms,
    });
  });
});
