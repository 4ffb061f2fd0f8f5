import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe('routing by occurredAt in the board timezone', () => {
  it('splits a month at local midnight in Europe/Paris, not at UTC midnight', async () => {
    h.clock.set('2026-12-01T12:00:00Z');
    await h.api('PUT', '/v1/boards/paris-month', {
      aggregation: 'sum',
      period: 'month',
      timezone: 'Europe/Paris',
      graceSeconds: 86400,
    });
    await h.api('PUT', '/v1/boards/utc-month', {
      aggregation: 'sum',
      period: 'month',
      timezone: 'UTC',
      graceSeconds: 86400,
    });
    // 23:30 UTC on Nov 30 is already 00:30 on Dec 1 in Paris (UTC+1).
    const at = '2026-11-30T23:30:00Z';
    const results = await h.postEvents([
      { board: 'paris-month', member: 'p', value: 1, idempotencyKey: 'paris-1', occurredAt: at },
      { board: 'utc-month', member: 'p', value: 1, idempotencyKey: 'utc-1', occurredAt: at },
      { board: 'paris-month', member: 'p', value: 1, idempotencyKey: 'paris-2', occurredAt: '2026-11-30T22:59:59Z' },
    ]);
    expect(results.map((r) => r.period)).toEqual(['2026-12', '2026-11', '2026-11']);
    const periods = await h.ctx.db
      .selectFrom('periods')
      .selectAll()
      .where('board_id', '=', 'paris-month')
      .orderBy('key')
      .execute();
    expect(periods.map((p) => [p.key, p.starts_at.toISOString(), p.ends_at?.toISOString()])).toEqual([
      ['2026-11', '2026-10-31T23:00:00.000Z', '2026-11-30T23:00:00.000Z'],
      ['2026-12', '2026-11-30T23:00:00.000Z', '2026-12-31T23:00:00.000Z'],
    ]);
  });

  it('routes by occurredAt, not by arrival: a late event lands in its own (still open) period', async () => {
    h.clock.set('2027-01-04T00:02:00Z');
    await h.api('PUT', '/v1/boards/weekly', {
      aggregation: 'best',
      period: 'week',
      timezone: 'UTC',
      graceSeconds: 300,
    });
    // ISO weeks: Sunday 2027-01-03 belongs to 2026-W53, Monday 2027-01-04 starts 2027-W01.
    const results = await h.postEvents([
      { board: 'weekly', member: 'w', value: 10, idempotencyKey: 'w-sun', occurredAt: '2027-01-03T23:59:59Z' },
      { board: 'weekly', member: 'w', value: 20, idempotencyKey: 'w-mon', occurredAt: '2027-01-04T00:00:00Z' },
    ]);
    expect(results).toMatchObject([
      { status: 'applied', period: '2026-W53' },
      { status: 'applied', period: '2027-W01' },
    ]);
    const old = await h.api('GET', '/v1/boards/weekly/standings/w?period=2026-W53');
    expect(old.body).toMatchObject({ rank: 1, score: 10, period: { key: '2026-W53', state: 'open' } });
    const current = await h.api('GET', '/v1/boards/weekly/standings/w');
    expect(current.body).toMatchObject({ rank: 1, score: 20, period: { key: '2027-W01' } });
  });

  it('rejects an event received after endsAt + graceSeconds as period_closed, and never creates that period', async () => {
    h.clock.set('2027-01-04T00:06:00Z');
    const results = await h.postEvents([
      { board: 'weekly', member: 'late', value: 99, idempotencyKey: 'w-late', occurredAt: '2027-01-03T23:00:00Z' },
      { board: 'weekly', member: 'late', value: 5, idempotencyKey: 'w-old', occurredAt: '2026-06-01T00:00:00Z' },
    ]);
    expect(results).toMatchObject([
      { status: 'rejected', reason: 'period_closed', period: '2026-W53' },
      { status: 'rejected', reason: 'period_closed', period: '2026-W23' },
    ]);
    expect((await h.api('GET', '/v1/boards/weekly/standings?period=2026-W23')).status).toBe(404);
    expect((await h.api('GET', '/v1/events/w-old')).body).toMatchObject({
      status: 'rejected',
      reason: 'period_closed',
    });
  });

  it('rejects events for a period whose state is no longer open', async () => {
    h.clock.set('2027-01-10T12:00:00Z');
    await h.postEvents([{ board: 'weekly', member: 'c', value: 1, idempotencyKey: 'w-c1' }]);
    await h.ctx.db
      .updateTable('periods')
      .set({ state: 'closed' })
      .where('board_id', '=', 'weekly')
      .where('key', '=', '2027-W01')
      .execute();
    const [r] = await h.postEvents([{ board: 'weekly', member: 'c', value: 2, idempotencyKey: 'w-c2' }]);
    expect(r).toMatchObject({ status: 'rejected', reason: 'period_closed' });
  });

  it('answers 404 for an unknown period and never creates one on read', async () => {
    h.clock.set('2027-02-10T12:00:00Z');
    const before = await h.ctx.db.selectFrom('periods').selectAll().execute();
    for (const period of ['2025-W10', '2027-W99', 'garbage', '2027-02']) {
      const res = await h.api('GET', `/v1/boards/weekly/standings?period=${period}`);
      expect(res.status).toBe(404);
      expect(res.body.message).toContain('period');
    }
    // The current period has no events yet: it is shown, empty, and still not created.
    const current = await h.api('GET', '/v1/boards/weekly/standings');
    expect(current.body).toMatchObject({ total: 0, entries: [], period: { key: '2027-W06', state: 'open' } });
    expect(await h.ctx.db.selectFrom('periods').selectAll().execute()).toEqual(before);
  });
});
