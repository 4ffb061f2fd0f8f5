import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { closePeriod } from '../../src/services/period-closing.js';
import {
  prng,
  referenceStandings,
  shuffle,
  type Aggregation,
  type Order,
  type RefEvent,
  type RefStanding,
  type TieBreak,
} from '../support/reference.js';

const NOW = new Date('2026-12-02T12:00:00Z');

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ concurrency: 4 });
  h.clock.set(NOW);
});
afterAll(() => h.close());

interface BoardSpec {
  id: string;
  aggregation: Aggregation;
  order: Order;
  tieBreak: TieBreak;
}

/** One event per member (a few members get two), with few distinct values and seconds. */
function generate(spec: BoardSpec, members: number, seed: number): RefEvent[] {
  const rand = prng(seed);
  const events: RefEvent[] = [];
  for (let i = 0; i < members; i += 1) {
    const member = `p${String(i).padStart(6, '0')}`;
    const count = rand() < 0.1 ? 2 : 1;
    for (let k = 0; k < count; k += 1) {
      events.push({
        key: `${spec.id}-${i}-${k}`,
        member,
        units: Math.floor(rand() * 500) - 100,
        atMs: NOW.getTime() - 3_600_000 + Math.floor(rand() * 60) * 1000 + Math.floor(rand() * 1000),
      });
    }
  }
  return events;
}

async function load(spec: BoardSpec, events: RefEvent[]): Promise<void> {
  const created = await h.api('PUT', `/v1/boards/${spec.id}`, {
    aggregation: spec.aggregation,
    order: spec.order,
    tieBreak: spec.tieBreak,
    period: 'month',
  });
  expect(created.status).toBe(201);
  const shuffled = shuffle(events, prng(99));
  for (let i = 0; i < shuffled.length; i += 1000) {
    const batch = shuffled.slice(i, i + 1000).map((e) => ({
      board: spec.id,
      member: e.member,
      value: e.units,
      idempotencyKey: e.key,
      occurredAt: new Date(e.atMs).toISOString(),
    }));
    expect((await h.api('POST', '/v1/events', { events: batch })).status).toBe(202);
  }
  await h.drain(120_000);
}

const entry = (s: RefStanding) => ({ rank: s.rank, member: s.member, displayName: null, score: s.units });

async function checkEveryRoute(spec: BoardSpec, expected: RefStanding[], rand: () => number): Promise<void> {
  const total = expected.length;
  const base = `/v1/boards/${spec.id}/standings`;

  // Pages: the top, the middle, near the end and past it.
  for (const [offset, limit] of [
    [0, 200],
    [Math.floor(total / 2), 50],
    [total - 3, 50],
    [total - 1, 1],
    [total + 10, 5],
  ] as const) {
    const page = await h.api('GET', `${base}?offset=${offset}&limit=${limit}`);
    expect(page.status).toBe(200);
    expect(page.body.total).toBe(total);
    expect(page.body.entries).toEqual(expected.slice(offset, offset + limit).map(entry));
  }

  // Single placements, with percentile and Top N%.
  for (const s of [expected[0]!, expected[total - 1]!, expected[Math.floor(rand() * total)]!]) {
    const placed = await h.api('GET', `${base}/${s.member}`);
    expect(placed.body).toMatchObject({
      member: s.member,
      rank: s.rank,
      score: s.units,
      total,
      percentile: s.rank / total,
      topPercent: Math.max(1, Math.round((s.rank / total) * 100)),
    });
  }
  const nobody = await h.api('GET', `${base}/no-score-member`);
  expect(nobody.body).toMatchObject({
    member: 'no-score-member',
    rank: null,
    score: null,
    percentile: null,
    topPercent: null,
    total,
  });

  // Around: clipped at rank 1 and at the last rank.
  for (const [index, radius] of [
    [0, 5],
    [total - 1, 5],
    [Math.floor(total / 3), 50],
    [Math.floor(total / 3), 0],
  ] as const) {
    const who = expected[index]!;
    const around = await h.api('GET', `${base}/${who.member}/around?radius=${radius}`);
    expect(around.status).toBe(200);
    expect(around.body.rank).toBe(who.rank);
    expect(around.body.entries).toEqual(expected.slice(Math.max(0, index - radius), index + radius + 1).map(entry));
  }
  expect((await h.api('GET', `${base}/no-score-member/around`)).body).toMatchObject({ rank: null, entries: [] });
  expect((await h.api('GET', `${base}/${expected[0]!.member}/around?radius=51`)).status).toBe(400);

  // Following: 0, 1 and 1000 followed members, some far below the top, some unknown.
  const sample = (n: number) =>
    shuffle(expected, rand)
      .slice(0, n)
      .map((s) => s.member);
  const me = expected[Math.floor(total * 0.9)]!.member;
  for (const followed of [[], sample(1), [...sample(990), ...Array.from({ length: 10 }, (_, i) => `ghost-${i}`)]]) {
    expect((await h.api('PUT', `/v1/members/${me}/following`, { memberIds: followed })).status).toBe(200);
    const group = new Set([me, ...followed]);
    const ranked = expected.filter((s) => group.has(s.member));
    const reference = ranked.map((s, i) => {
      const rank = spec.tieBreak === 'shared' ? ranked.findIndex((o) => o.units === s.units) + 1 : i + 1;
      return { rank, member: s.member, displayName: null, score: s.units };
    });
    const res = await h.api('GET', `${base}/${me}/following?limit=1001`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(reference.length);
    expect(res.body.rank).toBe(reference.find((r) => r.member === me)!.rank);
    expect(res.body.entries).toEqual(reference);
    const top = await h.api('GET', `${base}/${me}/following?limit=3`);
    expect(top.body.entries).toEqual(reference.slice(0, 3));
  }
}

describe('the query API on a 100,000-member board', () => {
  it('answers every route exactly as an independent sort does', async () => {
    const spec: BoardSpec = { id: 'big', aggregation: 'best', order: 'desc', tieBreak: 'shared' };
    const events = generate(spec, 100_000, 1);
    await load(spec, events);
    const expected = referenceStandings(events, spec);
    expect(expected.length).toBe(100_000);
    await checkEveryRoute(spec, expected, prng(2));
  }, 240000);
});

describe('every tie rule and order', () => {
  for (const order of ['desc', 'asc'] as const) {
    for (const tieBreak of ['first', 'last', 'member', 'shared'] as const) {
      it(`${order} / ${tieBreak}`, async () => {
        const spec: BoardSpec = { id: `q-${order}-${tieBreak}`, aggregation: 'sum', order, tieBreak };
        const events = generate(spec, 2500, order.length + tieBreak.length);
        await load(spec, events);
        await checkEveryRoute(spec, referenceStandings(events, spec), prng(3));
      });
    }
  }
});

describe('periods, results and member standings', () => {
  it('lists periods, answers 409 for results of an open period, and ranks a member on every board', async () => {
    const periods = await h.api('GET', '/v1/boards/big/periods');
    expect(periods.body).toEqual({
      board: 'big',
      periods: [
        { key: '2026-12', startsAt: '2026-12-01T00:00:00.000Z', endsAt: '2027-01-01T00:00:00.000Z', state: 'open' },
      ],
    });
    expect((await h.api('GET', '/v1/boards/big/periods/2026-12/results')).status).toBe(409);
    expect((await h.api('GET', '/v1/boards/big/periods/2026-11/results')).status).toBe(404);

    const mine = await h.api('GET', '/v1/members/p000001/standings');
    expect(mine.status).toBe(200);
    const onBig = mine.body.standings.find((s: any) => s.board === 'big');
    const direct = await h.api('GET', '/v1/boards/big/standings/p000001');
    expect(onBig).toMatchObject({
      rank: direct.body.rank,
      score: direct.body.score,
      total: 100_000,
      period: { key: '2026-12' },
    });
    expect(mine.body.standings).toHaveLength(9);
  });

  it('serves the final standings of a closed period from Postgres with the live ranks', async () => {
    const live = await h.api('GET', '/v1/boards/q-asc-shared/standings?limit=200&offset=2300');
    h.clock.set('2027-01-01T00:05:00Z');
    const board = (await h.ctx.boards.get('q-asc-shared'))!;
    expect(await closePeriod(h.ctx, board, '2026-12')).toBe(true);
    const results = await h.api('GET', '/v1/boards/q-asc-shared/periods/2026-12/results?limit=200&offset=2300');
    expect(results.status).toBe(200);
    expect(results.body).toMatchObject({
      source: 'database',
      total: live.body.total,
      period: { key: '2026-12', state: 'closed' },
    });
    expect(results.body.entries).toEqual(live.body.entries);
  });
});
