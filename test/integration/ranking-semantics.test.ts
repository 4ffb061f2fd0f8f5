import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import {
  prng,
  referenceStandings,
  shuffle,
  type Aggregation,
  type Order,
  type RefEvent,
  type TieBreak,
} from '../support/reference.js';

const AGGREGATIONS: Aggregation[] = ['best', 'sum', 'last'];
const ORDERS: Order[] = ['desc', 'asc'];
const TIE_BREAKS: TieBreak[] = ['first', 'last', 'member', 'shared'];
const NOW = new Date('2026-06-15T12:00:00Z');

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ concurrency: 4 });
  h.clock.set(NOW);
});
afterAll(() => h.close());

/** Events with few distinct values and times, so every tie rule is exercised. */
function generate(boardId: string, seed: number): RefEvent[] {
  const rand = prng(seed);
  const members = Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? `M${i}` : `m${i}.${i % 2 ? 'x' : 'y'}`));
  return Array.from({ length: 120 }, (_, i) => ({
    key: `${boardId}-e${i}`,
    member: members[Math.floor(rand() * members.length)]!,
    units: Math.floor(rand() * 7) - 2,
    // Whole seconds repeat, and several events share a second with different milliseconds.
    atMs: NOW.getTime() - 3_600_000 + Math.floor(rand() * 12) * 1000 + Math.floor(rand() * 3) * 250,
    category: rand() < 0.5 ? 'kills' : undefined,
  }));
}

async function fetchAll(boardId: string, category = 'all') {
  const entries: Array<{ rank: number; member: string; score: number }> = [];
  for (let offset = 0; ; offset += 7) {
    const res = await h.api('GET', `/v1/boards/${boardId}/standings?limit=7&offset=${offset}&category=${category}`);
    expect(res.status).toBe(200);
    entries.push(...res.body.entries.map((e: any) => ({ rank: e.rank, member: e.member, score: e.score })));
    if (res.body.entries.length < 7) return { entries, total: res.body.total as number };
  }
}

describe('ranking semantics against an independent reference', () => {
  for (const aggregation of AGGREGATIONS) {
    for (const order of ORDERS) {
      for (const tieBreak of TIE_BREAKS) {
        it(`${aggregation} / ${order} / ${tieBreak}: standings and placements match, whatever the arrival order`, async () => {
          const boardId = `b-${aggregation}-${order}-${tieBreak}`;
          const created = await h.api('PUT', `/v1/boards/${boardId}`, {
            aggregation,
            order,
            tieBreak,
            period: 'month',
            decimals: 1,
            categories: ['kills'],
          });
          expect(created.status).toBe(201);
          const events = generate(boardId, aggregation.length * 100 + order.length * 10 + tieBreak.length);
          const rand = prng(7);
          // Shuffled, in batches of random size: the result must not depend on either.
          const shuffled = shuffle(events, rand);
          for (let i = 0; i < shuffled.length;) {
            const size = 1 + Math.floor(rand() * 40);
            const batch = shuffled.slice(i, i + size).map((e) => ({
              board: boardId,
              member: e.member,
              value: e.units / 10,
              idempotencyKey: e.key,
              occurredAt: new Date(e.atMs).toISOString(),
              ...(e.category ? { category: e.category } : {}),
            }));
            const res = await h.api('POST', '/v1/events', { events: batch });
            expect(res.status).toBe(202);
            i += size;
          }
          await h.drain();

          const board = { aggregation, order, tieBreak };
          for (const category of ['all', 'kills']) {
            const expected = referenceStandings(events, board, category === 'all' ? undefined : category);
            const actual = await fetchAll(boardId, category);
            expect(actual.total).toBe(expected.length);
            expect(actual.entries).toEqual(
              expected.map((e) => ({ rank: e.rank, member: e.member, score: e.units / 10 })),
            );
            for (const e of expected.filter((_, i) => i % 3 === 0)) {
              const placed = await h.api(
                'GET',
                `/v1/boards/${boardId}/standings/${encodeURIComponent(e.member)}?category=${category}`,
              );
              expect(placed.body).toMatchObject({
                member: e.member,
                rank: e.rank,
                score: e.units / 10,
                total: expected.length,
                percentile: e.rank / expected.length,
                topPercent: Math.max(1, Math.round((e.rank / expected.length) * 100)),
              });
            }
          }
        });
      }
    }
  }
});
