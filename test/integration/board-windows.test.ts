import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { postAndWait } from '../support/wait-results.js';
import { runTick } from '../../src/services/period-tick.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const post = (events: object[]) => postAndWait(h, events);

async function periodKeys(board: string) {
  return (
    await h.ctx.db
      .selectFrom('periods')
      .select(['key', 'ends_at', 'state'])
      .where('board_id', '=', board)
      .orderBy('key')
      .execute()
  ).map((p) => p.key);
}

describe('board windows', () => {
  it('rejects events outside [startsAt, endsAt) as outside_window, kept for audit, and creates no period there', async () => {
    h.clock.set('2026-12-06T23:59:30Z');
    const put = await h.api('PUT', '/v1/boards/weekend', {
      aggregation: 'sum',
      period: 'day',
      window: { startsAt: '2026-12-05T00:00:00Z', endsAt: '2026-12-07T00:00:00+00:00' },
      graceSeconds: 86400,
    });
    expect(put.status).toBe(201);
    expect(put.body.window).toEqual({ startsAt: '2026-12-05T00:00:00.000Z', endsAt: '2026-12-07T00:00:00.000Z' });
    const results = await post([
      { board: 'weekend', member: 'a', value: 1, idempotencyKey: 'win-before', occurredAt: '2026-12-04T23:59:59Z' },
      { board: 'weekend', member: 'a', value: 2, idempotencyKey: 'win-start', occurredAt: '2026-12-05T00:00:00Z' },
      { board: 'weekend', member: 'a', value: 4, idempotencyKey: 'win-last', occurredAt: '2026-12-06T23:59:59Z' },
      { board: 'weekend', member: 'a', value: 8, idempotencyKey: 'win-end', occurredAt: '2026-12-07T00:00:00Z' },
      { board: 'weekend', member: 'b', value: 16, idempotencyKey: 'win-after', occurredAt: '2026-12-07T00:04:00Z' },
    ]);
    expect(results.map((r) => [r.idempotencyKey, r.status, r.reason])).toEqual([
      ['win-before', 'rejected', 'outside_window'],
      ['win-start', 'applied', undefined],
      ['win-last', 'applied', undefined],
      ['win-end', 'rejected', 'outside_window'],
      ['win-after', 'rejected', 'outside_window'],
    ]);
    const status = await h.api('GET', '/v1/events/win-before');
    expect(status.body).toMatchObject({ status: 'rejected', reason: 'outside_window', board: 'weekend', member: 'a' });
    // The same key posted again is still outside the window.
    expect(
      (
        await post([
          { board: 'weekend', member: 'a', value: 1, idempotencyKey: 'win-before', occurredAt: '2026-12-04T23:59:59Z' },
        ])
      )[0],
    ).toMatchObject({
      status: 'rejected',
      reason: 'outside_window',
    });
    // Only the two days inside the window exist, even after ticks past its end.
    await runTick(h.ctx);
    h.clock.set('2026-12-09T06:00:00Z');
    await runTick(h.ctx);
    expect(await periodKeys('weekend')).toEqual(['2026-12-05', '2026-12-06']);
    const day = await h.api('GET', '/v1/boards/weekend/standings/a?period=2026-12-06');
    expect(day.body).toMatchObject({ rank: 1, score: 4 });
  });

  it('closes an `all` board at endsAt + graceSeconds, and follows a window moved later', async () => {
    h.clock.set('2026-12-10T08:00:00Z');
    const window = { startsAt: '2026-12-10T08:00:00Z', endsAt: '2026-12-10T20:00:00Z' };
    const put = await h.api('PUT', '/v1/boards/one-off', {
      aggregation: 'best',
      period: 'all',
      window,
      graceSeconds: 600,
    });
    expect(put.body.currentPeriod).toMatchObject({ key: 'all', endsAt: '2026-12-10T20:00:00.000Z', state: 'open' });
    expect(await post([{ board: 'one-off', member: 'x', value: 5, idempotencyKey: 'oo-1' }])).toMatchObject([
      { status: 'applied', period: 'all' },
    ]);
    // Extended by two hours while running: the open `all` period ends later too.
    const moved = await h.api('PUT', '/v1/boards/one-off', {
      aggregation: 'best',
      period: 'all',
      window: { ...window, endsAt: '2026-12-10T22:00:00Z' },
      graceSeconds: 600,
    });
    expect(moved.status).toBe(200);
    expect(moved.body.currentPeriod).toMatchObject({ key: 'all', endsAt: '2026-12-10T22:00:00.000Z' });
    h.clock.set('2026-12-10T21:00:00Z');
    expect(await post([{ board: 'one-off', member: 'y', value: 7, idempotencyKey: 'oo-2' }])).toMatchObject([
      { status: 'applied', period: 'all' },
    ]);
    h.clock.set('2026-12-10T22:09:59Z');
    await runTick(h.ctx);
    expect((await h.api('GET', '/v1/boards/one-off/periods')).body.periods).toMatchObject([
      { key: 'all', state: 'open' },
    ]);
    h.clock.set('2026-12-10T22:10:00Z');
    expect((await runTick(h.ctx)).closed).toContain('one-off/all');
    expect(
      await post([
        { board: 'one-off', member: 'z', value: 9, idempotencyKey: 'oo-late', occurredAt: '2026-12-10T21:59:00Z' },
        { board: 'one-off', member: 'z', value: 9, idempotencyKey: 'oo-after', occurredAt: '2026-12-10T22:00:00Z' },
      ]),
    ).toMatchObject([
      { status: 'rejected', reason: 'period_closed' },
      { status: 'rejected', reason: 'outside_window' },
    ]);
    const final = await h.api('GET', '/v1/boards/one-off/periods/all/results');
    expect(final.body.entries).toEqual([
      { rank: 1, member: 'y', displayName: null, score: 7 },
      { rank: 2, member: 'x', displayName: null, score: 5 },
    ]);
  });

  it('before its window opens: no current period, registration into the first period, a report named after the board', async () => {
    h.clock.set('2026-12-11T10:00:00Z');
    const window = { startsAt: '2026-12-12T17:00:00Z', endsAt: '2026-12-13T21:00:00Z' };
    const cup = {
      aggregation: 'best',
      period: 'all',
      window,
      maxMembers: 2,
      graceSeconds: 600,
      displayName: 'Snow Cup',
    };
    expect((await h.api('PUT', '/v1/boards/snow-cup', cup)).body.currentPeriod).toBeNull();
    const early = await h.api('GET', '/v1/boards/snow-cup/standings');
    expect(early.status).toBe(404);
    expect(early.body.message).toContain('outside its window (opens 2026-12-12T17:00:00.000Z');
    // Players register before their first run, into the one period the tournament has.
    expect(await h.api('POST', '/v1/boards/snow-cup/entrants/p42')).toMatchObject({
      status: 201,
      body: { board: 'snow-cup', period: 'all', member: 'p42' },
    });
    // A weekly league opening on Monday 14 December: its first week, 2026-W51.
    await h.api('PUT', '/v1/boards/snow-league', {
      aggregation: 'sum',
      period: 'week',
      window: { startsAt: '2026-12-14T00:00:00Z' },
      maxMembers: 10,
    });
    expect(await h.api('POST', '/v1/boards/snow-league/entrants/p42')).toMatchObject({
      status: 201,
      body: { period: '2026-W51' },
    });
    expect((await h.api('GET', '/v1/boards/snow-league/entrants?period=2026-W51')).body.total).toBe(1);

    h.clock.set('2026-12-12T17:00:00Z');
    expect((await h.api('GET', '/v1/boards/snow-cup')).body.currentPeriod).toMatchObject({
      key: 'all',
      startsAt: '2026-12-12T17:00:00.000Z',
      endsAt: '2026-12-13T21:00:00.000Z',
      state: 'open',
    });
    const runs = await post([
      { board: 'snow-cup', member: 'p42', value: 30, idempotencyKey: 'snow-1' },
      { board: 'snow-cup', member: 'p43', value: 20, idempotencyKey: 'snow-2' },
      { board: 'snow-cup', member: 'p44', value: 50, idempotencyKey: 'snow-3' },
    ]);
    // p42 entered first, so p44 finds the board full.
    expect(runs.map((r) => r.reason ?? r.status)).toEqual(['applied', 'applied', 'board_full']);
    h.clock.set('2026-12-13T21:10:00Z');
    expect((await runTick(h.ctx)).closed).toContain('snow-cup/all');
    // After the end, nothing is current and registration is refused.
    expect((await h.api('GET', '/v1/boards/snow-cup')).body.currentPeriod).toBeNull();
    expect(await h.api('POST', '/v1/boards/snow-cup/entrants/p45')).toMatchObject({
      status: 409,
      body: { error: 'outside_window' },
    });
    const report = (await h.api('GET', '/v1/members/p42/notifications')).body.notifications[0];
    expect(report).toMatchObject({ title: 'Snow Cup finished', body: 'You finished 1st' });
  });

  it('answers 400 naming the window field for a bad window', async () => {
    const cases: Array<[unknown, string]> = [
      [{ startsAt: '2026-12-10T08:00:00Z', endsAt: '2026-12-10T08:00:00Z' }, 'window.endsAt'],
      [{ startsAt: 'tomorrow' }, 'window.startsAt'],
      [{ endsAt: 1765353600 }, 'window.endsAt'],
      [{ from: '2026-12-10T08:00:00Z' }, 'window.from'],
      ['2026-12', 'window'],
    ];
    for (const [window, path] of cases) {
      const res = await h.api('PUT', '/v1/boards/bad-window', { aggregation: 'sum', window });
      expect(res.status, JSON.stringify(window)).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toEqual([path]);
    }
    expect((await h.api('GET', '/v1/boards/bad-window')).status).toBe(404);
  });
});
