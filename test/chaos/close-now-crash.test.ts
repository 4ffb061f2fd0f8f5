import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startDeployment, type Deployment } from '../support/deployment.js';
import { referenceStandings } from '../support/reference.js';
import { until } from '../support/poll.js';

/**
 * Closing a period now, with the worker that runs the close SIGKILLed in the middle of it
 * (the period `closing`, nothing of the close written): another worker finishes it, once.
 */
let d: Deployment;
beforeAll(async () => {
  d = await startDeployment({ workers: 0 });
});
afterAll(() => d?.close());

describe('a worker is SIGKILLed in the middle of closing a period now', () => {
  it('another worker finishes the close: one set of results, awards and reports', async () => {
    const board = 'chaos-close-now';
    expect(
      (await d.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', period: 'all', tieBreak: 'member' })).status,
    ).toBe(201);
    const events = Array.from({ length: 60 }, (_, i) => ({
      board,
      member: `m${i % 20}`,
      value: 1 + ((i * 7) % 11),
      idempotencyKey: `ccn-${i}`,
    }));
    const posted = await fetch(`${d.baseUrl}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    });
    expect(posted.status).toBe(202);

    // The victim applies the events, then takes the close and dies in the middle of it.
    const victim = await d.startWorker({ LAUREL_FAULT_PAUSE_MID_CLOSE_MS: '600000' }, 'close-victim');
    await until('the events applied', async () => {
      const { rows } = await d.pg.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM score_events WHERE board_id = $1',
        [board],
      );
      return rows[0]!.n === events.length || undefined;
    });
    expect((await d.api('POST', `/v1/boards/${board}/periods/all/close`, { reason: 'stopped early' })).status).toBe(
      202,
    );
    const held = await victim.waitForLog((l) => l.fault === 'paused-mid-close', 60_000);
    expect(held).toMatchObject({ board, period: 'all' });
    await victim.stop('SIGKILL');
    const state = await d.pg.query<{ state: string }>('SELECT state FROM periods WHERE board_id = $1', [board]);
    expect(state.rows[0]!.state).toBe('closing');
    // A second request cannot start another close.
    expect((await d.api('POST', `/v1/boards/${board}/periods/all/close`, { reason: 'again' })).status).toBe(409);

    // A fresh worker takes the dead one's job over (or its own scheduled tick does).
    await d.startWorker({}, 'after-close-crash');
    await until(
      'the period closed',
      async () => (await d.api('GET', `/v1/boards/${board}/periods`)).body.periods[0]?.state === 'closed' || undefined,
      { timeoutMs: 120_000, everyMs: 250 },
    );
    const { rows } = await d.pg.query<{ results: number; awards: number; reports: number }>(
      `SELECT (SELECT count(*)::int FROM period_results WHERE board_id = $1 AND category = 'all' AND region = 'world') AS results,
              (SELECT count(*)::int FROM awards WHERE board_id = $1) AS awards,
              (SELECT count(*)::int FROM notifications WHERE board_id = $1 AND kind = 'period_report') AS reports`,
      [board],
    );
    expect(rows[0]).toEqual({ results: 20, awards: 20, reports: 20 });
    const expected = referenceStandings(
      events.map((e, i) => ({ key: e.idempotencyKey, member: e.member, units: e.value, atMs: i })),
      { aggregation: 'sum', order: 'desc', tieBreak: 'member' },
    );
    const results = await d.api('GET', `/v1/boards/${board}/periods/all/results?limit=100`);
    expect(results.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
      expected.map((e) => [e.rank, e.member, e.units]),
    );
  });
});
