import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { postAndWait } from '../support/wait-results.js';
import { aggregate, prng, rankAll, shuffle, type RefEvent } from '../support/reference.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-05T12:00:00Z');
});
afterAll(() => h.close());

const post = (events: object[]) => postAndWait(h, events);
const at = (hhmm: string) => `2026-12-05T${hhmm}:00Z`;

async function status(key: string) {
  const { status, reason } = (await h.api('GET', `/v1/events/${key}`)).body;
  return reason ? `${status}:${reason}` : status;
}

describe('maxAttempts', () => {
  it('counts only the first n events by occurredAt; an earlier late event takes the place of the last counted one', async () => {
    expect(
      (await h.api('PUT', '/v1/boards/tries', { aggregation: 'best', period: 'day', maxAttempts: 2 })).body.maxAttempts,
    ).toBe(2);
    const ev = (key: string, time: string, value: number) => ({
      board: 'tries',
      member: 'ann',
      value,
      idempotencyKey: key,
      occurredAt: at(time),
    });
    expect((await post([ev('t-10', '10:00', 5), ev('t-11', '11:00', 7)])).map((r) => r.status)).toEqual([
      'applied',
      'applied',
    ]);
    expect(await post([ev('t-1130', '11:30', 9)])).toMatchObject([
      { status: 'rejected', reason: 'attempts_exhausted', period: '2026-12-05', score: null, rank: null },
    ]);
    expect((await h.api('GET', '/v1/boards/tries/standings/ann')).body).toMatchObject({ rank: 1, score: 7 });
    // 09:00 arrives last but is among the first two: 11:00 stops counting, best is now 5.
    expect(await post([ev('t-09', '09:00', 1)])).toMatchObject([{ status: 'applied', score: 5, rank: 1 }]);
    expect((await h.api('GET', '/v1/boards/tries/standings/ann')).body).toMatchObject({ rank: 1, score: 5 });
    expect(await Promise.all(['t-09', 't-10', 't-11', 't-1130'].map(status))).toEqual([
      'applied',
      'applied',
      'rejected:attempts_exhausted',
      'rejected:attempts_exhausted',
    ]);
    // Postgres holds the same: the stored aggregate was recounted, not just the cache.
    const row = await h.ctx.db
      .selectFrom('member_aggregates')
      .select(['value', 'event_count'])
      .where('board_id', '=', 'tries')
      .where('category', '=', 'all')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ value: 5, event_count: 2 });
  });

  it('ends the same whatever the arrival order and batch split (against a reference)', async () => {
    const rand = prng(20261205);
    const members = ['m1', 'm2', 'm3'];
    const events: RefEvent[] = Array.from({ length: 24 }, (_, i) => ({
      key: `ord-${String.fromCharCode(97 + (i % 5))}${i}`,
      member: members[i % 3]!,
      units: Math.floor(rand() * 10) - 2,
      // Few distinct times, so that order among equal times falls to the key.
      atMs: Date.parse(at('08:00')) + Math.floor(rand() * 4) * 600_000,
    }));
    // Reference: per member the first 3 by (time, key bytes), then the sum and the ranking.
    const firstThree = members.flatMap((m) =>
      events
        .filter((e) => e.member === m)
        .sort((x, y) => x.atMs - y.atMs || Buffer.compare(Buffer.from(x.key), Buffer.from(y.key)))
        .slice(0, 3),
    );
    const expected = rankAll(aggregate(firstThree, 'sum', 'desc'), 'desc', 'first').map((r) => [
      r.rank,
      r.member,
      r.units,
    ]);
    const counted = new Set(firstThree.map((e) => e.key));
    expect(expected.length).toBe(3);

    for (const [run, batches] of [
      [0, 1],
      [1, 24],
      [2, 5],
      [3, 3],
    ] as const) {
      const board = `order-${run}`;
      await h.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', period: 'day', maxAttempts: 3 });
      const order = run === 0 ? events : shuffle(events, rand);
      const size = Math.ceil(order.length / batches);
      for (let i = 0; i < order.length; i += size) {
        await post(
          order.slice(i, i + size).map((e) => ({
            board,
            member: e.member,
            value: e.units,
            idempotencyKey: `${board}.${e.key}`,
            occurredAt: new Date(e.atMs).toISOString(),
          })),
        );
      }
      const page = (await h.api('GET', `/v1/boards/${board}/standings`)).body;
      expect(
        page.entries.map((e: { rank: number; member: string; score: number }) => [e.rank, e.member, e.score]),
        board,
      ).toEqual(expected);
      const statuses = await Promise.all(events.map((e) => status(`${board}.${e.key}`)));
      expect(statuses, board).toEqual(
        events.map((e) => (counted.has(e.key) ? 'applied' : 'rejected:attempts_exhausted')),
      );
    }
  });

  it('answers 400 naming maxAttempts out of 1-10000, and 409 when it changes on a board with events', async () => {
    for (const maxAttempts of [0, 10_001, 1.5, '3']) {
      const res = await h.api('PUT', '/v1/boards/bad-tries', { aggregation: 'sum', maxAttempts });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(['maxAttempts']);
    }
    const changed = await h.api('PUT', '/v1/boards/tries', { aggregation: 'best', period: 'day', maxAttempts: 3 });
    expect(changed.status).toBe(409);
    expect(changed.body.details).toEqual([{ path: 'maxAttempts', message: 'fixed once the board has events' }]);
  });
});
