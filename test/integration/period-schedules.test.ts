import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type KyselyPlugin } from 'kysely';
import { createHarness, type Harness } from '../support/harness.js';
import { postAndWait } from '../support/wait-results.js';
import { runTick } from '../../src/services/period-tick.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const post = (events: object[]) => postAndWait(h, events);

async function periodRows(board: string) {
  const rows = await h.ctx.db
    .selectFrom('periods')
    .selectAll()
    .where('board_id', '=', board)
    .orderBy('starts_at')
    .execute();
  return rows.map((p) => [p.key, p.starts_at.toISOString(), p.ends_at?.toISOString() ?? null, p.state]);
}

describe('cron schedules', () => {
  it('runs Friday-to-Friday weeks from 18:00 in the board timezone, keyed by their start in UTC', async () => {
    h.clock.set('2026-12-09T12:00:00Z');
    const put = await h.api('PUT', '/v1/boards/friday', {
      aggregation: 'sum',
      period: { cron: '0 18 * * FRI' },
      timezone: 'Europe/Paris',
      graceSeconds: 60,
    });
    expect(put.status).toBe(201);
    // 18:00 in Paris in December is 17:00 UTC; 4 December 2026 is a Friday.
    expect(put.body).toMatchObject({
      period: { cron: '0 18 * * FRI' },
      currentPeriod: {
        key: '20261204T1700Z',
        startsAt: '2026-12-04T17:00:00.000Z',
        endsAt: '2026-12-11T17:00:00.000Z',
        state: 'open',
      },
    });
    const results = await post([
      { board: 'friday', member: 'ann', value: 3, idempotencyKey: 'fri-1', occurredAt: '2026-12-04T17:00:00Z' },
      { board: 'friday', member: 'ann', value: 4, idempotencyKey: 'fri-2', occurredAt: '2026-12-04T16:59:59Z' },
      { board: 'friday', member: 'bob', value: 5, idempotencyKey: 'fri-3', occurredAt: '2026-12-09T11:00:00Z' },
    ]);
    // A second before the tick is the previous week, closed since 27 Nov + 60 s.
    expect(results.map((r) => [r.status, r.reason, r.period])).toEqual([
      ['applied', undefined, '20261204T1700Z'],
      ['rejected', 'period_closed', '20261127T1700Z'],
      ['applied', undefined, '20261204T1700Z'],
    ]);
    const standings = await h.api('GET', '/v1/boards/friday/standings?period=20261204T1700Z');
    expect(standings.body.entries).toEqual([
      { rank: 1, member: 'bob', displayName: null, score: 5 },
      { rank: 2, member: 'ann', displayName: null, score: 3 },
    ]);
    // A key that parses but is no period start of this schedule names nothing.
    expect((await h.api('GET', '/v1/boards/friday/standings?period=20261205T1700Z')).status).toBe(404);
    expect((await h.api('GET', '/v1/boards/friday/standings?period=2026-12')).status).toBe(404);
  });

  it('closes at endsAt + grace through the tick, with awards and a report naming the week', async () => {
    h.clock.set('2026-12-11T17:00:30Z');
    await runTick(h.ctx);
    expect((await periodRows('friday')).find((p) => p[0] === '20261204T1700Z')![3]).toBe('open');
    // Inside the grace: still counts; after it: period_closed.
    expect(
      (
        await post([
          { board: 'friday', member: 'ann', value: 10, idempotencyKey: 'fri-4', occurredAt: '2026-12-11T16:59:00Z' },
        ])
      )[0],
    ).toMatchObject({
      status: 'applied',
      period: '20261204T1700Z',
    });
    h.clock.set('2026-12-11T17:01:01Z');
    const tick = await runTick(h.ctx);
    expect(tick.closed).toContain('friday/20261204T1700Z');
    expect(
      (
        await post([
          { board: 'friday', member: 'ann', value: 1, idempotencyKey: 'fri-5', occurredAt: '2026-12-11T16:59:30Z' },
        ])
      )[0],
    ).toMatchObject({
      status: 'rejected',
      reason: 'period_closed',
    });
    const final = await h.api('GET', '/v1/boards/friday/periods/20261204T1700Z/results');
    expect(final.body.entries).toEqual([
      { rank: 1, member: 'ann', displayName: null, score: 13 },
      { rank: 2, member: 'bob', displayName: null, score: 5 },
    ]);
    const inbox = await h.api('GET', '/v1/members/ann/notifications');
    expect(inbox.body.notifications[0]).toMatchObject({
      kind: 'period_report',
      board: 'friday',
      period: '20261204T1700Z',
      title: 'Week of 4 Dec 18:00 finished',
      body: 'You finished 1st',
    });
    // The next week was created ahead of time by the tick.
    expect((await periodRows('friday')).map((p) => p[0])).toContain('20261211T1700Z');
  });

  it('keeps 18:00 local across the spring DST change: the week that contains it is an hour shorter', async () => {
    h.clock.set('2026-03-30T12:00:00Z');
    await h.api('PUT', '/v1/boards/friday-dst', {
      aggregation: 'sum',
      period: { cron: '0 18 * * 5' },
      timezone: 'Europe/Paris',
    });
    const board = await h.api('GET', '/v1/boards/friday-dst');
    // Friday 27 March 18:00 CET = 17:00 UTC; Friday 3 April 18:00 CEST = 16:00 UTC.
    expect(board.body.currentPeriod).toMatchObject({
      key: '20260327T1700Z',
      startsAt: '2026-03-27T17:00:00.000Z',
      endsAt: '2026-04-03T16:00:00.000Z',
    });
  });
});

describe('every schedules', () => {
  it('`d` and `w` keep local wall time across DST, `h` is absolute time', async () => {
    h.clock.set('2026-04-05T12:00:00Z');
    // Anchor: Saturday 28 March 2026, 09:00 in Paris (08:00 UTC, before the change on the 29th).
    await h.api('PUT', '/v1/boards/two-days', {
      aggregation: 'best',
      period: { every: '2d', anchor: '2026-03-28T08:00:00Z' },
      timezone: 'Europe/Paris',
    });
    await h.api('PUT', '/v1/boards/weekly-anchor', {
      aggregation: 'best',
      period: { every: '1w', anchor: '2026-03-28T08:00:00Z' },
      timezone: 'Europe/Paris',
    });
    await h.api('PUT', '/v1/boards/six-hours', {
      aggregation: 'best',
      period: { every: '6h', anchor: '2026-03-28T08:00:00Z' },
      timezone: 'Europe/Paris',
    });
    const results = await post([
      // 09:00 local on 30 March is 07:00 UTC (CEST): the second 2-day period starts there.
      { board: 'two-days', member: 'm', value: 1, idempotencyKey: 'd-1', occurredAt: '2026-03-30T06:59:59Z' },
      { board: 'two-days', member: 'm', value: 1, idempotencyKey: 'd-2', occurredAt: '2026-03-30T07:00:00Z' },
      // Periods tile time back from the anchor too.
      { board: 'two-days', member: 'm', value: 1, idempotencyKey: 'd-3', occurredAt: '2026-03-27T12:00:00Z' },
      { board: 'weekly-anchor', member: 'm', value: 1, idempotencyKey: 'w-1', occurredAt: '2026-04-04T06:59:00Z' },
      { board: 'weekly-anchor', member: 'm', value: 1, idempotencyKey: 'w-2', occurredAt: '2026-04-04T07:00:00Z' },
      // Six hours after 08:00 UTC is 14:00 UTC whatever the local clock did.
      { board: 'six-hours', member: 'm', value: 1, idempotencyKey: 'h-1', occurredAt: '2026-03-29T13:59:59Z' },
      { board: 'six-hours', member: 'm', value: 1, idempotencyKey: 'h-2', occurredAt: '2026-03-29T14:00:00Z' },
    ]);
    expect(results.map((r) => r.period)).toEqual([
      '20260328T0800Z',
      '20260330T0700Z',
      '20260326T0800Z',
      '20260328T0800Z',
      '20260404T0700Z',
      '20260329T0800Z',
      '20260329T1400Z',
    ]);
    // Boundaries as the boards show them (their current period) at instants across the change.
    const current = async (board: string, at: string) => {
      h.clock.set(at);
      const { key, startsAt, endsAt } = (await h.api('GET', `/v1/boards/${board}`)).body.currentPeriod;
      return [key, startsAt, endsAt];
    };
    expect(await current('two-days', '2026-03-27T12:00:00Z')).toEqual([
      '20260326T0800Z',
      '2026-03-26T08:00:00.000Z',
      '2026-03-28T08:00:00.000Z',
    ]);
    expect(await current('two-days', '2026-03-29T12:00:00Z')).toEqual([
      '20260328T0800Z',
      '2026-03-28T08:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
    ]);
    expect(await current('two-days', '2026-03-31T12:00:00Z')).toEqual([
      '20260330T0700Z',
      '2026-03-30T07:00:00.000Z',
      '2026-04-01T07:00:00.000Z',
    ]);
    expect(await current('weekly-anchor', '2026-03-31T12:00:00Z')).toEqual([
      '20260328T0800Z',
      '2026-03-28T08:00:00.000Z',
      '2026-04-04T07:00:00.000Z',
    ]);
    expect(await current('six-hours', '2026-03-29T12:00:00Z')).toEqual([
      '20260329T0800Z',
      '2026-03-29T08:00:00.000Z',
      '2026-03-29T14:00:00.000Z',
    ]);
  });

  it('answers 400 naming period for a bad every, anchor or cron, and 409 when events exist', async () => {
    const bad: unknown[] = [
      { every: '0h', anchor: '2026-03-28T08:00:00Z' },
      { every: '5m', anchor: '2026-03-28T08:00:00Z' },
      { every: 'day', anchor: '2026-03-28T08:00:00Z' },
      { every: '1d', anchor: 'yesterday' },
      { every: '1d', anchor: '2026-03-28T08:00:30Z' },
      { every: '1d' },
      { cron: '0 18 * *' },
      { cron: '0 25 * * *' },
      { cron: 'every friday' },
      { cron: '0 0 30 2 *' },
      { cron: '0 18 * * FRI', anchor: '2026-03-28T08:00:00Z' },
      'fortnight',
    ];
    for (const period of bad) {
      const res = await h.api('PUT', '/v1/boards/bad-schedule', { aggregation: 'sum', period });
      expect(res.status, JSON.stringify(period)).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.details.length, JSON.stringify(period)).toBeGreaterThan(0);
      for (const d of res.body.details) expect(d.path, JSON.stringify(period)).toMatch(/^period(\.|$)/);
    }
    expect((await h.api('GET', '/v1/boards/bad-schedule')).status).toBe(404);
    h.clock.set('2026-04-05T12:00:00Z');
    expect((await post([{ board: 'six-hours', member: 'm', value: 1, idempotencyKey: 'h-3' }]))[0]).toMatchObject({
      status: 'applied',
      period: '20260405T0800Z',
    });
    // The same schedule written differently is no change; another one is, once events exist.
    const same = await h.api('PUT', '/v1/boards/six-hours', {
      aggregation: 'best',
      period: { every: '6h', anchor: '2026-03-28T09:00:00+01:00' },
      timezone: 'Europe/Paris',
    });
    expect(same.status).toBe(200);
    const changed = await h.api('PUT', '/v1/boards/six-hours', {
      aggregation: 'best',
      period: { every: '12h', anchor: '2026-03-28T08:00:00Z' },
      timezone: 'Europe/Paris',
    });
    expect(changed.status).toBe(409);
    expect(changed.body.details).toEqual([{ path: 'period', message: 'fixed once the board has events' }]);
  });
});

describe('the tick with thousands of boards of 1-hour periods', () => {
  const BOARDS = 2000;

  it('closes every due period in one tick with a number of queries that does not grow with the boards', async () => {
    h.clock.set('2027-02-01T10:30:00Z');
    await sql`
      INSERT INTO boards (id, display_name, aggregation, sort_order, tie_break, period_kind, period_schedule, timezone, decimals,
                          categories, regions, grace_seconds, awards)
      SELECT 'hourly-' || i, 'hourly-' || i, 'sum', 'desc', 'first', 'every', '{"every":"1h","anchor":"2027-01-01T00:00:00Z"}'::jsonb,
             'UTC', 0, '{}', false, 60, '{"tiers":[1],"regionTiers":[],"followingTop1":false}'::jsonb
        FROM generate_series(1, ${BOARDS}) i`.execute(h.ctx.db);
    // Two of them get events in the 10:00 hour; the rest stay empty.
    expect(
      (
        await post([
          { board: 'hourly-1', member: 'a', value: 2, idempotencyKey: 'hr-1' },
          { board: 'hourly-1', member: 'b', value: 1, idempotencyKey: 'hr-2' },
          { board: 'hourly-2', member: 'a', value: 1, idempotencyKey: 'hr-3' },
        ])
      ).map((r) => r.period),
    ).toEqual(['20270201T1000Z', '20270201T1000Z', '20270201T1000Z']);
    await runTick(h.ctx); // creates the 10:00 and 11:00 periods of every board
    const open = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM periods WHERE board_id LIKE 'hourly-%' AND state = 'open'`.execute(h.ctx.db);
    expect(open.rows[0]!.n).toBe(2 * BOARDS);

    // Past 11:00 + grace: every 10:00 period is due.
    h.clock.set('2027-02-01T11:01:01Z');
    let queries = 0;
    const counting: KyselyPlugin = {
      transformQuery: (args) => {
        queries += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    const started = Date.now();
    const tick = await runTick({ ...h.ctx, db: h.ctx.db.withPlugin(counting) });
    const elapsed = Date.now() - started;
    const due = await sql<{ state: string; n: number }>`
      SELECT state, count(*)::int AS n FROM periods WHERE board_id LIKE 'hourly-%' AND key = '20270201T1000Z' GROUP BY state`.execute(
      h.ctx.db,
    );
    expect(due.rows).toEqual([{ state: 'closed', n: BOARDS }]);
    expect(tick.closed.filter((c) => c.startsWith('hourly-'))).toHaveLength(BOARDS);
    // A few statements for the whole tick, plus a fixed handful per period that had events
    // (2 here): one statement per board would be thousands.
    expect(queries).toBeLessThan(60);
    expect(elapsed).toBeLessThan(30_000);
    const final = await h.api('GET', '/v1/boards/hourly-1/periods/20270201T1000Z/results');
    expect(final.body.entries.map((e: { member: string; rank: number }) => [e.member, e.rank])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    // The next hour was created ahead: every board has its 12:00 period now, still open.
    const ahead = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM periods WHERE board_id LIKE 'hourly-%' AND key = '20270201T1200Z' AND state = 'open'`.execute(
      h.ctx.db,
    );
    expect(ahead.rows[0]!.n).toBe(BOARDS);
  });
});
