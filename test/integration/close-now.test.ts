import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { until } from '../support/poll.js';
import { referenceStandings, type RefEvent } from '../support/reference.js';
import { runTick } from '../../src/services/period-tick.js';
import { closePeriod } from '../../src/services/period-closing.js';
import { lockClosing } from '../../src/storage/postgres/closing-repository.js';
import { processScoreJob } from '../../src/services/score-application.js';
import { payloadHash, type ScoreEventInput } from '../../src/domain/event.js';

/**
 * Closing a period now: POST /v1/boards/{id}/periods/{key}/close ends an open period at the
 * moment it is accepted and closes it as at its end, exactly once, whatever races it.
 */

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const close = (board: string, key: string, body: unknown = { reason: 'ended early' }) =>
  h.api('POST', `/v1/boards/${board}/periods/${key}/close`, body);

async function periodOf(board: string, key: string) {
  const res = await h.api('GET', `/v1/boards/${board}/periods`);
  return res.body.periods.find((p: { key: string }) => p.key === key) as
    { key: string; state: string; endsAt: string | null } | undefined;
}

async function closedOnce(board: string, key: string) {
  await until(`${board}/${key} closed`, async () => (await periodOf(board, key))?.state === 'closed' || undefined);
  const { rows } = await sql<{ results: number; awards: number; reports: number }>`
    SELECT (SELECT count(*)::int FROM period_results WHERE board_id = ${board} AND period_key = ${key}
              AND category = 'all' AND region = 'world') AS results,
           (SELECT count(*)::int FROM awards WHERE board_id = ${board} AND period_key = ${key}) AS awards,
           (SELECT count(*)::int FROM notifications WHERE board_id = ${board} AND period_key = ${key}
              AND kind = 'period_report') AS reports`.execute(h.ctx.db);
  return rows[0]!;
}

describe('closing a period now', () => {
  it('ends a day at the request, refuses later events, and closes with results, awards and reports once', async () => {
    h.clock.set('2026-12-02T10:00:00Z');
    expect((await h.api('PUT', '/v1/boards/cn-day', { aggregation: 'best', period: 'day' })).status).toBe(201);
    const events: RefEvent[] = Array.from({ length: 12 }, (_, i) => ({
      key: `cn-${i}`,
      member: `p${i % 5}`,
      units: (i * 29) % 50,
      atMs: Date.parse('2026-12-02T08:00:00Z') + i * 60_000,
    }));
    const posted = await h.postEvents(
      events.map((e) => ({
        board: 'cn-day',
        member: e.member,
        value: e.units,
        idempotencyKey: e.key,
        occurredAt: new Date(e.atMs).toISOString(),
      })),
    );
    expect(posted.map((r: { status: string }) => r.status)).toEqual(events.map(() => 'applied'));

    const accepted = await close('cn-day', '2026-12-02');
    expect(accepted).toMatchObject({ status: 202, body: { board: 'cn-day', period: '2026-12-02' } });
    h.clock.set('2026-12-02T10:05:00Z');
    const late = await h.postEvents([
      { board: 'cn-day', member: 'p1', value: 99, idempotencyKey: 'cn-late', occurredAt: '2026-12-02T10:01:00Z' },
    ]);
    expect(late).toMatchObject([{ status: 'rejected', reason: 'period_closed' }]);

    expect(await closedOnce('cn-day', '2026-12-02')).toEqual({ results: 5, awards: 5, reports: 5 });
    const period = await periodOf('cn-day', '2026-12-02');
    expect(period?.endsAt).toBe('2026-12-02T10:00:00.000Z');
    const results = await h.api('GET', '/v1/boards/cn-day/periods/2026-12-02/results');
    const expected = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'first' });
    expect(results.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
      expected.map((e) => [e.rank, e.member, e.units]),
    );

    // Closed: asking again is a conflict, and the tick closes nothing twice.
    expect(await close('cn-day', '2026-12-02')).toMatchObject({ status: 409, body: { error: 'conflict' } });
    await runTick(h.ctx);
    expect(await closedOnce('cn-day', '2026-12-02')).toEqual({ results: 5, awards: 5, reports: 5 });
  });

  it('grants one of many concurrent requests, and ticks racing it close once', async () => {
    h.clock.set('2026-12-03T09:00:00Z');
    expect((await h.api('PUT', '/v1/boards/cn-race', { aggregation: 'sum', period: 'day' })).status).toBe(201);
    await h.postEvents(
      Array.from({ length: 8 }, (_, i) => ({
        board: 'cn-race',
        member: `r${i}`,
        value: i + 1,
        idempotencyKey: `r-${i}`,
      })),
    );
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => close('cn-race', '2026-12-03')),
      runTick(h.ctx).then(() => ({ status: 0 })),
      runTick(h.ctx).then(() => ({ status: 0 })),
    ]);
    const statuses = answers.map((a) => a.status).filter((s) => s !== 0);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    await Promise.all([runTick(h.ctx), runTick(h.ctx)]);
    expect(await closedOnce('cn-race', '2026-12-03')).toEqual({ results: 8, awards: 8, reports: 8 });
  });

  it('lets a closer whose snapshot predates another close find nothing to do, and commit', async () => {
    h.clock.set('2026-12-03T12:00:00Z');
    expect((await h.api('PUT', '/v1/boards/cn-late', { aggregation: 'sum', period: 'day' })).status).toBe(201);
    await h.postEvents([{ board: 'cn-late', member: 'l1', value: 1, idempotencyKey: 'late-1' }]);
    await sql`UPDATE periods SET state = 'closing' WHERE board_id = 'cn-late' AND key = '2026-12-03'`.execute(h.ctx.db);
    const found = await h.ctx.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        // The snapshot is taken here, while the period is still closing.
        await sql`SELECT 1`.execute(trx);
        await sql`SELECT state FROM periods WHERE board_id = 'cn-late'`.execute(trx);
        expect(await closePeriod(h.ctx, (await h.ctx.boards.get('cn-late'))!, '2026-12-03')).toBe(true);
        return lockClosing(trx, 'cn-late', '2026-12-03');
      });
    expect(found).toBe(false);
    expect(await closedOnce('cn-late', '2026-12-03')).toEqual({ results: 1, awards: 1, reports: 1 });
  });

  it('is finished by the next tick after a crash in the middle, with one set of results', async () => {
    h.clock.set('2026-12-04T09:00:00Z');
    expect((await h.api('PUT', '/v1/boards/cn-crash', { aggregation: 'sum', period: 'day' })).status).toBe(201);
    await h.postEvents(
      Array.from({ length: 4 }, (_, i) => ({ board: 'cn-crash', member: `k${i}`, value: i, idempotencyKey: `k-${i}` })),
    );
    let crashes = 0;
    h.faults.midClose = (board) => {
      if (board === 'cn-crash' && crashes++ < 2) throw new Error('injected crash mid-close');
    };
    try {
      expect((await close('cn-crash', '2026-12-04')).status).toBe(202);
      await until('the close attempted', async () => crashes >= 1 || undefined);
      await runTick(h.ctx).catch(() => undefined);
      await runTick(h.ctx);
    } finally {
      h.faults.midClose = undefined;
    }
    expect(await closedOnce('cn-crash', '2026-12-04')).toEqual({ results: 4, awards: 4, reports: 4 });
  });

  it('on an all board, ends the window too: later events are outside it, and the board stays closed', async () => {
    h.clock.set('2026-12-05T12:00:00Z');
    expect(
      (await h.api('PUT', '/v1/boards/cn-cup', { aggregation: 'sum', period: 'all', displayName: 'Cup' })).status,
    ).toBe(201);
    await h.postEvents([{ board: 'cn-cup', member: 'w1', value: 3, idempotencyKey: 'cup-1' }]);
    expect((await close('cn-cup', 'all')).status).toBe(202);
    expect((await h.api('GET', '/v1/boards/cn-cup')).body).toMatchObject({
      window: { endsAt: '2026-12-05T12:00:00.000Z' },
    });
    expect(await closedOnce('cn-cup', 'all')).toEqual({ results: 1, awards: 1, reports: 1 });
    h.clock.set('2026-12-05T12:10:00Z');
    expect(await h.postEvents([{ board: 'cn-cup', member: 'w2', value: 1, idempotencyKey: 'cup-2' }])).toMatchObject([
      { status: 'rejected', reason: 'outside_window' },
    ]);
    await runTick(h.ctx);
    expect(await periodOf('cn-cup', 'all')).toMatchObject({ state: 'closed' });
    const report = await h.api('GET', '/v1/members/w1/notifications');
    expect(report.body.notifications[0]).toMatchObject({ kind: 'period_report', title: 'Cup finished' });
  });

  it('names what is wrong: no reason, no board, no period, a period not started', async () => {
    h.clock.set('2026-12-06T09:00:00Z');
    expect((await h.api('PUT', '/v1/boards/cn-edge', { aggregation: 'sum', period: 'day' })).status).toBe(201);
    await runTick(h.ctx);
    expect(await close('cn-edge', '2026-12-06', {})).toMatchObject({
      status: 400,
      body: { details: [{ path: 'reason' }] },
    });
    expect((await close('nope', '2026-12-06')).status).toBe(404);
    expect((await close('cn-edge', '2026-11-01')).status).toBe(404);
    // The tick creates tomorrow ahead of time; it has not started.
    expect(await close('cn-edge', '2026-12-07')).toMatchObject({
      status: 409,
      body: { details: [{ path: 'period' }] },
    });
    const readKey = await h.api('POST', '/v1/admin/keys', { name: 'reader', role: 'read' });
    const refused = await fetch(`${h.baseUrl}/v1/boards/cn-edge/periods/2026-12-06/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${readKey.body.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'x' }),
    });
    expect(refused.status).toBe(403);
  });
});

describe('a period closed now, before its close has run', () => {
  let q: Harness;
  beforeAll(async () => {
    // No workers: the queued close waits, so the period is still open when the events come.
    q = await createHarness({ workers: false });
  });
  afterAll(() => q.close());

  const apply = async (events: ScoreEventInput[]) => {
    const receivedAt = q.clock.now().toISOString();
    const out = await processScoreJob(q.ctx, {
      events: events.map((posted) => ({ posted, receivedAt, payloadHash: payloadHash(posted) })),
      wantResults: true,
    });
    return out.results!.map((r) => (r.status === 'rejected' ? `rejected:${r.reason}` : r.status));
  };

  it('counts what occurred before its new end and refuses what occurred after', async () => {
    q.clock.set('2026-12-02T10:00:00Z');
    expect((await q.api('PUT', '/v1/boards/cn-open', { aggregation: 'sum', period: 'day' })).status).toBe(201);
    expect(await apply([{ board: 'cn-open', member: 'a', value: 1, idempotencyKey: 'o-1' }])).toEqual(['applied']);
    expect((await q.api('POST', '/v1/boards/cn-open/periods/2026-12-02/close', { reason: 'now' })).status).toBe(202);
    q.clock.set('2026-12-02T10:02:00Z');
    expect(
      await apply([
        { board: 'cn-open', member: 'a', value: 2, idempotencyKey: 'o-2', occurredAt: '2026-12-02T09:59:00Z' },
        { board: 'cn-open', member: 'b', value: 3, idempotencyKey: 'o-3', occurredAt: '2026-12-02T10:01:00Z' },
      ]),
    ).toEqual(['applied', 'rejected:period_closed']);
    const periods = await q.api('GET', '/v1/boards/cn-open/periods');
    expect(periods.body.periods[0]).toMatchObject({
      key: '2026-12-02',
      state: 'open',
      endsAt: '2026-12-02T10:00:00.000Z',
    });
    await runTick(q.ctx);
    const results = await q.api('GET', '/v1/boards/cn-open/periods/2026-12-02/results');
    expect(results.body.entries.map((e: any) => [e.member, e.score])).toEqual([['a', 3]]);
  });
});
