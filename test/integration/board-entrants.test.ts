import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { postAndWait } from '../support/wait-results.js';
import { aggregate, prng, rankAll, shuffle, type RefEvent } from '../support/reference.js';
import { referenceEntrants } from '../support/entrants-reference.js';
import { until } from '../support/poll.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ concurrency: 4 });
  h.clock.set('2026-12-05T12:00:00Z');
});
afterAll(() => h.close());

const at = (hhmm: string) => `2026-12-05T${hhmm}:00Z`;
const ev = (board: string, key: string, member: string, value: number, time = '10:00') => ({
  board,
  member,
  value,
  idempotencyKey: key,
  occurredAt: at(time),
});

async function status(key: string) {
  const { status, reason } = (await h.api('GET', `/v1/events/${key}`)).body;
  return reason ? `${status}:${reason}` : status;
}

async function allEntrants(board: string, limit = 2): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { entrants: Array<{ member: string }>; nextCursor: string | null; total: number } } =
      await h.api('GET', `/v1/boards/${board}/entrants?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    out.push(...page.body.entrants.map((e) => e.member));
    cursor = page.body.nextCursor;
  } while (cursor);
  return out;
}

const ranking = async (board: string) =>
  (await h.api('GET', `/v1/boards/${board}/standings`)).body.entries.map(
    (e: { rank: number; member: string; score: number }) => [e.rank, e.member, e.score],
  );

describe('maxMembers and entrants', () => {
  it('lets the first members of a batch in by their first event and rejects the rest board_full, for good', async () => {
    expect(
      (await h.api('PUT', '/v1/boards/cup', { aggregation: 'best', period: 'day', maxMembers: 2 })).body.maxMembers,
    ).toBe(2);
    // Batch order is not entry order: first events by (occurredAt, key) decide.
    const results = await postAndWait(h, [
      ev('cup', 'c-dan', 'dan', 9, '10:05'),
      ev('cup', 'c-bob', 'bob', 4, '10:01'),
      ev('cup', 'c-ann', 'ann', 5, '10:01'),
    ]);
    expect(results.map((r) => r.reason ?? r.status)).toEqual(['board_full', 'applied', 'applied']);
    expect(await status('c-dan')).toBe('rejected:board_full');
    // An entrant keeps scoring; a newcomer stays out, even with an earlier event.
    expect(
      (await postAndWait(h, [ev('cup', 'c-bob2', 'bob', 8, '11:00'), ev('cup', 'c-eve', 'eve', 99, '09:00')])).map(
        (r) => r.reason ?? r.status,
      ),
    ).toEqual(['applied', 'board_full']);
    expect(await ranking('cup')).toEqual([
      [1, 'bob', 8],
      [2, 'ann', 5],
    ]);
    const page = (await h.api('GET', '/v1/boards/cup/entrants')).body;
    expect(page).toMatchObject({
      board: 'cup',
      period: { key: '2026-12-05', state: 'open' },
      total: 2,
      nextCursor: null,
    });
    expect(page.entrants.map((e: { member: string }) => e.member)).toEqual(['ann', 'bob']);
    // Full: entering through the API is refused too, and nothing is written.
    const refused = await h.api('POST', '/v1/boards/cup/entrants/zed');
    expect(refused).toMatchObject({ status: 409, body: { error: 'board_full' } });
    expect((await h.api('GET', '/v1/boards/cup/entrants')).body.total).toBe(2);
  });

  it('enters a member without a score through the API, once, and their events then count', async () => {
    await h.api('PUT', '/v1/boards/open-cup', { aggregation: 'sum', period: 'day', maxMembers: 2 });
    const first = await h.api('POST', '/v1/boards/open-cup/entrants/kim');
    expect(first).toMatchObject({ status: 201, body: { board: 'open-cup', period: '2026-12-05', member: 'kim' } });
    const again = await h.api('POST', '/v1/boards/open-cup/entrants/kim');
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await h.api('GET', '/v1/boards/open-cup/standings')).body.total).toBe(0);
    expect(
      (
        await postAndWait(h, [
          ev('open-cup', 'o-lee', 'lee', 3),
          ev('open-cup', 'o-max', 'max', 4),
          ev('open-cup', 'o-kim', 'kim', 1),
        ])
      ).map((r) => r.reason ?? r.status),
    ).toEqual(['applied', 'board_full', 'applied']);
    expect(await allEntrants('open-cup', 1)).toEqual(['kim', 'lee']);
    expect(await ranking('open-cup')).toEqual([
      [1, 'lee', 3],
      [2, 'kim', 1],
    ]);
  });

  it('answers 400 naming maxMembers out of 1-10,000,000 or a bad cursor, 404 for an unknown period, 409 on an uncapped board', async () => {
    for (const maxMembers of [0, 10_000_001, 2.5, '3']) {
      const res = await h.api('PUT', '/v1/boards/bad-cup', { aggregation: 'sum', maxMembers });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(['maxMembers']);
    }
    expect((await h.api('GET', '/v1/boards/cup/entrants?cursor=zz')).body.details).toEqual([
      { path: 'cursor', message: 'not a cursor this route gave' },
    ]);
    expect((await h.api('GET', '/v1/boards/cup/entrants?period=2026-11-01')).status).toBe(404);
    await h.api('PUT', '/v1/boards/uncapped', { aggregation: 'sum' });
    expect((await h.api('POST', '/v1/boards/uncapped/entrants/ann')).status).toBe(409);
    expect((await h.api('POST', '/v1/boards/cup/entrants/bad%20id')).body.details).toEqual([
      { path: 'memberId', message: 'must match ^[A-Za-z0-9_.:@-]{1,128}$' },
    ]);
  });

  it('matches the reference for any batch split, and ends with the same entrants whatever the order within a batch', async () => {
    const rand = prng(20261203);
    const members = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const events: RefEvent[] = Array.from({ length: 28 }, (_, i) => ({
      key: `k${String.fromCharCode(97 + (i % 6))}${i}`,
      member: members[Math.floor(rand() * members.length)]!,
      units: Math.floor(rand() * 20),
      atMs: Date.parse(at('08:00')) + Math.floor(rand() * 5) * 60_000,
    }));
    for (const [run, batches] of [
      [0, 1],
      [1, 4],
      [2, 28],
      [3, 3],
    ] as const) {
      const board = `split-${run}`;
      await h.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', period: 'day', maxMembers: 4 });
      const order = run === 0 ? events : shuffle(events, rand);
      const size = Math.ceil(order.length / batches);
      const split = Array.from({ length: Math.ceil(order.length / size) }, (_, i) =>
        order.slice(i * size, i * size + size),
      );
      for (const batch of split) {
        await postAndWait(
          h,
          batch.map((e) => ({
            board,
            member: e.member,
            value: e.units,
            idempotencyKey: `${board}.${e.key}`,
            occurredAt: new Date(e.atMs).toISOString(),
          })),
        );
      }
      const expected = referenceEntrants(split, 4);
      expect(await allEntrants(board, 3), board).toEqual(expected.entrants);
      const counted = events.filter((e) => expected.entrants.includes(e.member));
      expect(await ranking(board), board).toEqual(
        rankAll(aggregate(counted, 'sum', 'desc'), 'desc', 'first').map((r) => [r.rank, r.member, r.units]),
      );
      const statuses = await Promise.all(events.map((e) => status(`${board}.${e.key}`)));
      expect(statuses, board).toEqual(
        events.map((e) => (expected.entrants.includes(e.member) ? 'applied' : 'rejected:board_full')),
      );
    }
  });

  it('never lets more than maxMembers in when batches and API entries race', async () => {
    await h.api('PUT', '/v1/boards/race', { aggregation: 'best', period: 'day', maxMembers: 5 });
    const batches = Array.from({ length: 8 }, (_, b) =>
      [0, 1, 2].map((i) => ev('race', `r-${b}-${i}`, `p${b * 3 + i}`, b * 3 + i)),
    );
    const entries = ['q1', 'q2', 'q3'].map((m) => h.api('POST', `/v1/boards/race/entrants/${m}`));
    const [answers, posted] = await Promise.all([
      Promise.all(entries),
      Promise.all(batches.map((batch) => postAndWait(h, batch))),
    ]);
    const inside = await allEntrants('race', 4);
    expect(inside).toHaveLength(5);
    expect(new Set(inside).size).toBe(5);
    const applied = posted.flat().filter((r) => r.status === 'applied');
    const enteredByApi = answers.filter((a) => a.status === 201).length;
    expect(applied.length + enteredByApi).toBe(5);
    expect(
      posted
        .flat()
        .filter((r) => r.status === 'rejected')
        .every((r) => r.reason === 'board_full'),
    ).toBe(true);
    expect(
      answers.filter((a) => a.status !== 201).every((a) => a.status === 409 && a.body.error === 'board_full'),
    ).toBe(true);
    expect((await h.api('GET', '/v1/boards/race/standings')).body.total).toBe(applied.length);
  });

  it("keeps an erased entrant's place under the pseudonym: the board stays as full as it was", async () => {
    const { erasureId } = (await h.api('DELETE', '/v1/members/ann')).body;
    await until('erasure done', async () =>
      (await h.api('GET', `/v1/admin/erasures/${erasureId}`)).body.state === 'done' ? true : undefined,
    );
    await h.drain();
    const page = (await h.api('GET', '/v1/boards/cup/entrants')).body;
    expect(page.total).toBe(2);
    expect(page.entrants.map((e: { member: string }) => e.member)).toEqual([
      expect.stringMatching(/^erased:[0-9a-f]{12}$/),
      'bob',
    ]);
    // A new event for the same id is a new member, and the board is still full.
    expect((await postAndWait(h, [ev('cup', 'c-ann-again', 'ann', 3)])).map((r) => r.reason)).toEqual(['board_full']);
  });
});
