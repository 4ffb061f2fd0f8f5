import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

/**
 * An event is (board, idempotencyKey): one match posted to a weekly and a monthly board with
 * its natural key counts on both; duplicates and conflicts are judged within one board; a
 * key alone names an event only when one board holds it.
 */
let h: Harness;
const KEY = 'm-fanout:pl-0001';

beforeAll(async () => {
  h = await createHarness();
  for (const board of ['weekly', 'monthly', 'season'])
    expect((await h.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', period: 'all' })).status).toBe(201);
});
afterAll(async () => {
  await h?.close();
});

const score = async (board: string, member: string) =>
  (await h.api('GET', `/v1/boards/${board}/standings/${member}?period=all`)).body.score;

describe('idempotency keys per board', () => {
  it('one key posted to two boards is two events, each applied, each result naming its board', async () => {
    const res = await h.api('POST', '/v1/events?wait=true', {
      events: [
        { board: 'weekly', member: 'pl-0001', value: 40, idempotencyKey: KEY },
        { board: 'monthly', member: 'pl-0001', value: 40, idempotencyKey: KEY },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { board: string; status: string }) => [r.board, r.status])).toEqual([
      ['weekly', 'applied'],
      ['monthly', 'applied'],
    ]);
    expect([await score('weekly', 'pl-0001'), await score('monthly', 'pl-0001')]).toEqual([40, 40]);
    const rows = await h.ctx.db.selectFrom('score_event_keys').select('board_id').orderBy('board_id').execute();
    expect(rows.map((r) => r.board_id)).toEqual(['monthly', 'weekly']);

    // Posted again to both: a duplicate on each, counted once on each.
    const again = await h.postEvents([
      { board: 'monthly', member: 'pl-0001', value: 40, idempotencyKey: KEY },
      { board: 'weekly', member: 'pl-0001', value: 40, idempotencyKey: KEY },
    ]);
    expect(again.map((r) => [r.board, r.status])).toEqual([
      ['monthly', 'duplicate'],
      ['weekly', 'duplicate'],
    ]);
    expect([await score('weekly', 'pl-0001'), await score('monthly', 'pl-0001')]).toEqual([40, 40]);
  });

  it('a conflict is judged within one board: the other boards are untouched, a third counts the key', async () => {
    const [conflict, third] = await h.postEvents([
      { board: 'weekly', member: 'pl-0001', value: 99, idempotencyKey: KEY },
      { board: 'season', member: 'pl-0001', value: 99, idempotencyKey: KEY },
    ]);
    expect([conflict.board, conflict.status, conflict.reason]).toEqual(['weekly', 'rejected', 'conflict']);
    expect([third.board, third.status]).toEqual(['season', 'applied']);
    expect([
      await score('weekly', 'pl-0001'),
      await score('monthly', 'pl-0001'),
      await score('season', 'pl-0001'),
    ]).toEqual([40, 40, 99]);
  });

  it('a key held by several boards is ambiguous without ?board=; with it, that board event; another board 404', async () => {
    const ambiguous = await h.api('GET', `/v1/events/${encodeURIComponent(KEY)}`);
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.body.error).toBe('ambiguous_key');
    expect(ambiguous.body.details).toEqual([{ path: 'board', message: 'monthly, season, weekly' }]);

    const monthly = await h.api('GET', `/v1/events/${encodeURIComponent(KEY)}?board=monthly`);
    expect([monthly.status, monthly.body.board, monthly.body.status, monthly.body.score]).toEqual([
      200,
      'monthly',
      'applied',
      40,
    ]);
    expect((await h.api('GET', `/v1/events/${encodeURIComponent(KEY)}?board=nowhere`)).status).toBe(404);
    expect((await h.api('GET', `/v1/events/${encodeURIComponent(KEY)}?board=Not%20a%20board`)).body.details).toEqual([
      expect.objectContaining({ path: 'board' }),
    ]);

    // A key on one board only needs no board.
    await h.postEvents([{ board: 'weekly', member: 'pl-0002', value: 5, idempotencyKey: 'solo-1' }]);
    const solo = await h.api('GET', '/v1/events/solo-1');
    expect([solo.status, solo.body.board, solo.body.status]).toEqual([200, 'weekly', 'applied']);

    // Void: the same rule; the other boards' events stay.
    const voidAmbiguous = await h.api('POST', `/v1/events/${encodeURIComponent(KEY)}/void`, { reason: 'test' });
    expect([voidAmbiguous.status, voidAmbiguous.body.error]).toEqual([409, 'ambiguous_key']);
    const voided = await h.api('POST', `/v1/events/${encodeURIComponent(KEY)}/void?board=monthly`, { reason: 'test' });
    expect(voided.body).toEqual({ idempotencyKey: KEY, board: 'monthly', status: 'voided', reason: 'test' });
    await h.drain();
    expect([
      await score('weekly', 'pl-0001'),
      await score('monthly', 'pl-0001'),
      await score('season', 'pl-0001'),
    ]).toEqual([40, null, 99]);
    expect((await h.api('GET', `/v1/events/${encodeURIComponent(KEY)}?board=weekly`)).body.status).toBe('applied');
  });

  it('a queued event is pending on its own board only', async () => {
    const accepted = await h.api('POST', '/v1/events', {
      board: 'season',
      member: 'pl-0003',
      value: 1,
      idempotencyKey: 'queued-1',
    });
    expect(accepted.status).toBe(202);
    expect(accepted.headers.get('location')).toBe('/v1/events/queued-1?board=season');
    // Either still pending or already applied, on season; nothing on weekly.
    const status = await h.api('GET', '/v1/events/queued-1?board=season');
    expect(['pending', 'applied']).toContain(status.body.status);
    expect(status.body.board).toBe('season');
    expect((await h.api('GET', '/v1/events/queued-1?board=weekly')).status).toBe(404);
    await h.drain();
  });

  it('erasing a member with the same key on two boards keeps both pairs claimed, as hashes', async () => {
    const key = 'm-erase:pl-gone';
    await h.postEvents([
      { board: 'weekly', member: 'pl-gone', value: 7, idempotencyKey: key },
      { board: 'monthly', member: 'pl-gone', value: 7, idempotencyKey: key },
    ]);
    const erased = await h.api('DELETE', '/v1/members/pl-gone');
    expect(erased.status).toBe(202);
    let state = '';
    for (let i = 0; i < 200 && state !== 'done'; i += 1) {
      state = (await h.api('GET', `/v1/admin/erasures/${erased.body.erasureId}`)).body.state;
      if (state !== 'done') await new Promise((r) => setTimeout(r, 100));
    }
    expect(state).toBe('done');
    await h.drain();

    const db = h.ctx.db;
    const pairs = await db
      .selectFrom('score_event_keys')
      .select(['board_id', 'member_id', 'idempotency_key'])
      .where('member_id', '=', '(erased)')
      .orderBy('board_id')
      .execute();
    expect(pairs.map((p) => p.board_id)).toEqual(['monthly', 'weekly']);
    for (const p of pairs) expect(p.idempotency_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await db.selectFrom('score_events').select('id').where('idempotency_key', '=', key).execute()).toEqual([]);

    // Posted again, each is a duplicate on its own board: nothing counts twice.
    const retried = await h.postEvents([
      { board: 'weekly', member: 'pl-gone', value: 7, idempotencyKey: key },
      { board: 'monthly', member: 'pl-gone', value: 7, idempotencyKey: key },
    ]);
    expect(retried.map((r) => [r.board, r.status])).toEqual([
      ['weekly', 'duplicate'],
      ['monthly', 'duplicate'],
    ]);
  });
});
