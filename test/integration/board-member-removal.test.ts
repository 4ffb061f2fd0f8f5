import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, ADMIN_KEY, type Harness } from '../support/harness.js';
import { openSse } from '../support/sse-client.js';
import { referenceStandings, type RefEvent } from '../support/reference.js';
import { computeRollups } from '../../src/services/rollups.js';

/**
 * DELETE /v1/boards/{id}/members/{memberId}: every applied event of the member in one board
 * period is voided, in one go; the member leaves that period's standings and keeps the rest.
 */

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-02T10:15:00Z');
  const sum = { aggregation: 'sum', period: 'month', categories: ['ranked', 'casual'], regions: true };
  expect((await h.api('PUT', '/v1/boards/rm-sum', sum)).status).toBe(201);
  expect((await h.api('PUT', '/v1/boards/rm-other', { aggregation: 'best', period: 'month' })).status).toBe(201);
  for (const [member, region] of [
    ['x', 'eu'],
    ['y', 'eu'],
    ['z', 'us'],
  ] as const)
    expect((await h.api('PUT', `/v1/members/${member}`, { region })).status).toBe(200);
});
afterAll(() => h.close());

const EVENTS = [
  { member: 'x', units: 5, category: 'ranked' },
  { member: 'x', units: 7, category: 'casual' },
  { member: 'x', units: 4, category: 'ranked' },
  { member: 'y', units: 9, category: 'ranked' },
  { member: 'z', units: 6, category: 'casual' },
  { member: 'y', units: 1, category: 'casual' },
].map((e, i) => ({ ...e, key: `rm-${i}`, atMs: Date.parse('2026-12-02T09:00:00Z') + i * 1000 }));

const ranks = (res: { body: { entries: Array<{ rank: number; member: string; score: number }> } }) =>
  res.body.entries.map((e) => [e.rank, e.member, e.score]);
const expected = (events: Array<RefEvent & { category: string }>, category?: string, region?: string) =>
  referenceStandings(
    events.filter(
      (e) => (!category || e.category === category) && (!region || (e.member === 'z' ? 'us' : 'eu') === region),
    ),
    { aggregation: 'sum', order: 'desc', tieBreak: 'first' },
  ).map((s) => [s.rank, s.member, s.units]);

describe('removing a member from one board period', () => {
  it('voids their events there, ranks everyone else as if they had never played, and keeps their other boards', async () => {
    await h.postEvents([
      ...EVENTS.map((e) => ({
        board: 'rm-sum',
        member: e.member,
        value: e.units,
        category: e.category,
        idempotencyKey: e.key,
        occurredAt: new Date(e.atMs).toISOString(),
      })),
      { board: 'rm-other', member: 'x', value: 3, idempotencyKey: 'rm-other-x' },
    ]);
    const stream = await openSse(`${h.baseUrl}/v1/boards/rm-sum/standings/x/stream`, ADMIN_KEY);
    expect((await stream.next()).data).toMatchObject({ member: 'x', rank: 1, score: 16 });

    const removed = await h.api('DELETE', '/v1/boards/rm-sum/members/x?period=current', { reason: 'smurf account' });
    expect(removed).toMatchObject({
      status: 200,
      body: { board: 'rm-sum', period: '2026-12', member: 'x', voided: 3 },
    });

    // The open stream follows.
    expect((await stream.nextMatching((m) => m.data.rank === null)).data).toMatchObject({ member: 'x', rank: null });
    stream.close();
    const left = EVENTS.filter((e) => e.member !== 'x');
    expect(ranks(await h.api('GET', '/v1/boards/rm-sum/standings'))).toEqual(expected(left));
    expect(ranks(await h.api('GET', '/v1/boards/rm-sum/standings?category=ranked'))).toEqual(expected(left, 'ranked'));
    expect(ranks(await h.api('GET', '/v1/boards/rm-sum/standings?region=eu'))).toEqual(expected(left, undefined, 'eu'));
    expect((await h.api('GET', '/v1/boards/rm-sum/standings')).body.total).toBe(2);
    expect((await h.api('GET', '/v1/boards/rm-sum/standings/x')).body).toMatchObject({ rank: null });
    // Another board keeps the member.
    expect((await h.api('GET', '/v1/boards/rm-other/standings/x')).body).toMatchObject({ rank: 1, score: 3 });
    // The ledger keeps the events, voided with the reason.
    const history = await h.api('GET', '/v1/members/x/events?board=rm-sum');
    expect(history.body.events.map((e: any) => [e.idempotencyKey, e.status])).toEqual([
      ['rm-2', 'voided'],
      ['rm-1', 'voided'],
      ['rm-0', 'voided'],
    ]);
    // The rollups count each void.
    await computeRollups(h.ctx);
    const stats = await h.api('GET', '/v1/admin/stats?board=rm-sum&from=2026-12-02T00:00:00Z&to=2026-12-03T00:00:00Z');
    expect(stats.body.rollups.map((r: any) => r.moderation.voids)).toEqual([3]);

    // Again: nothing left to void.
    expect((await h.api('DELETE', '/v1/boards/rm-sum/members/x', { reason: 'again' })).body).toMatchObject({
      voided: 0,
    });
    // A new event of theirs counts again, from zero.
    await h.postEvents([{ board: 'rm-sum', member: 'x', value: 2, idempotencyKey: 'rm-back' }]);
    expect((await h.api('GET', '/v1/boards/rm-sum/standings/x')).body).toMatchObject({ rank: 3, score: 2 });
  });

  it('names what is wrong: no reason, no board, no period, no member', async () => {
    const remove = (path: string, body: unknown = { reason: 'r' }) => h.api('DELETE', path, body);
    expect(await remove('/v1/boards/rm-sum/members/y', {})).toMatchObject({
      status: 400,
      body: { details: [{ path: 'reason' }] },
    });
    expect((await remove('/v1/boards/nope/members/y')).status).toBe(404);
    expect((await remove('/v1/boards/rm-sum/members/y?period=2020-01')).status).toBe(404);
    expect((await remove('/v1/boards/rm-sum/members/nobody')).status).toBe(404);
    expect(await remove('/v1/boards/rm-sum/members/y?period=now')).toMatchObject({ status: 404 });
  });
});
