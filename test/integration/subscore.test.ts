import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLeaderboards } from '../../src/services/verify-service.js';
import { runTick } from '../../src/services/period-tick.js';
import { createHarness, type Harness } from '../support/harness.js';
import {
  prng,
  referenceStandings,
  shuffle,
  type Aggregation,
  type Order,
  type RefEvent,
  type RefStanding,
  type TieBreak,
  wireEvent,
} from '../support/reference.js';
import { until } from '../support/poll.js';

/**
 * Subscores: equal scores ordered by the aggregated subscore, then by the tie
 * rule, identical from the cache, the Postgres fallback, a fromEvents rebuild, `verify` and
 * the final results of a closed period, against the reference model.
 */

const NOW = new Date('2026-11-20T12:00:00Z');
const DECIMALS = 1;

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ concurrency: 3 });
  h.clock.set(NOW);
});
afterAll(() => h.close());

/** Few values and subscores, repeated seconds: pairs tie on value, on both, and on time. */
function generate(boardId: string, seed: number): RefEvent[] {
  const rand = prng(seed);
  const members = Array.from({ length: 16 }, (_, i) => (i % 4 === 0 ? `S${i}` : `s${i}.${i % 3}`));
  return Array.from({ length: 90 }, (_, i) => {
    const sub = Math.floor(rand() * 4) - 1;
    return {
      key: `${boardId}-e${i}`,
      member: members[Math.floor(rand() * members.length)]!,
      units: Math.floor(rand() * 4),
      atMs: NOW.getTime() - 3_600_000 + Math.floor(rand() * 6) * 1000 + Math.floor(rand() * 2) * 400,
      category: rand() < 0.4 ? 'c1' : undefined,
      // Some events carry none: they count as 0.
      ...(rand() < 0.15 ? {} : { sub }),
    };
  });
}

const wire = (board: string, e: RefEvent) => wireEvent(board, e, DECIMALS);

const expectedRows = (standings: RefStanding[]) =>
  standings.map((s) => [s.rank, s.member, s.units / 10 ** DECIMALS, s.sub / 10 ** DECIMALS]);

async function served(path: string): Promise<{ source: string; rows: unknown[] }> {
  const res = await h.api('GET', path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { source: res.body.source, rows: res.body.entries.map((e: any) => [e.rank, e.member, e.score, e.subscore]) };
}

describe('subscore', () => {
  it('is refused with a 400 naming the field: on a board without one, with too many decimals, beyond ±2^40', async () => {
    await h.api('PUT', '/v1/boards/plain', { aggregation: 'best' });
    await h.api('PUT', '/v1/boards/withsub', { aggregation: 'best', decimals: 1, subscore: { order: 'asc' } });
    const res = await h.api('POST', '/v1/events', {
      events: [
        { board: 'plain', member: 'a', value: 1, idempotencyKey: 'v-0', subscore: 1 },
        { board: 'withsub', member: 'a', value: 1, idempotencyKey: 'v-1', subscore: 0.25 },
        { board: 'withsub', member: 'a', value: 1, idempotencyKey: 'v-2', subscore: 2 ** 40 },
        { board: 'withsub', member: 'a', value: 1, idempotencyKey: 'v-4', subscore: -(2 ** 40) / 10 },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: any) => [d.index, d.path])).toEqual([
      [0, 'subscore'],
      [1, 'subscore'],
      [2, 'subscore'],
    ]);
    expect(res.body.details[0].message).toMatch(/no subscore/);
    // Nothing of the batch was enqueued.
    expect((await h.api('GET', '/v1/events/v-4')).status).toBe(404);
    const typed = await h.api('POST', '/v1/events', {
      board: 'withsub',
      member: 'a',
      value: 1,
      idempotencyKey: 'v-3',
      subscore: '1',
    });
    expect(typed.status).toBe(400);
    expect(typed.body.details.map((d: any) => d.path)).toEqual(['subscore']);
    expect(
      (await h.api('PUT', '/v1/boards/withsub', { aggregation: 'best', decimals: 1, subscore: { order: 'sideways' } }))
        .status,
    ).toBe(400);
  });

  it('cannot change once the board has events', async () => {
    await h.api('PUT', '/v1/boards/fixedsub', { aggregation: 'best', subscore: { order: 'desc' } });
    await h.postEvents([{ board: 'fixedsub', member: 'a', value: 1, subscore: 2, idempotencyKey: 'fx-1' }]);
    const res = await h.api('PUT', '/v1/boards/fixedsub', { aggregation: 'best', subscore: { order: 'asc' } });
    expect(res.status).toBe(409);
    expect(res.body.message).toMatch(/subscore/);
  });

  it('a summed subscore that would leave ±2^40 is rejected out_of_range, never rounded', async () => {
    await h.api('PUT', '/v1/boards/subsum', { aggregation: 'sum', subscore: { order: 'desc' } });
    const results = await h.postEvents([
      { board: 'subsum', member: 'a', value: 1, subscore: 2 ** 40, idempotencyKey: 'ss-1' },
      { board: 'subsum', member: 'b', value: 1, subscore: 2 ** 39, idempotencyKey: 'ss-2' },
    ]);
    expect(results.map((r: any) => r.status)).toEqual(['applied', 'applied']);
    const over = await h.postEvents([{ board: 'subsum', member: 'a', value: 1, subscore: 1, idempotencyKey: 'ss-3' }]);
    expect(over[0]).toMatchObject({ status: 'rejected', reason: 'out_of_range' });
    const page = await served('/v1/boards/subsum/standings');
    expect(page.rows).toEqual([
      [1, 'a', 1, 2 ** 40],
      [2, 'b', 1, 2 ** 39],
    ]);
  });

  it('entries carry no subscore on a board without one', async () => {
    await h.api('PUT', '/v1/boards/nosub', { aggregation: 'best' });
    await h.postEvents([{ board: 'nosub', member: 'a', value: 1, idempotencyKey: 'ns-1' }]);
    const res = await h.api('GET', '/v1/boards/nosub/standings');
    expect(res.body.entries).toEqual([{ rank: 1, member: 'a', displayName: null, score: 1 }]);
  });

  const aggregations: Aggregation[] = ['best', 'sum', 'last'];
  const orders: Order[] = ['desc', 'asc'];
  const tieBreaks: TieBreak[] = ['first', 'last', 'member', 'shared'];
  for (const aggregation of aggregations) {
    for (const subOrder of orders) {
      for (const tieBreak of tieBreaks) {
        const order: Order = tieBreak === 'last' ? 'asc' : 'desc';
        it(`${aggregation}, value ${order}, subscore ${subOrder}, ${tieBreak}: cache, fallback, rebuild, verify and final results agree with the reference`, async () => {
          const id = `sub-${aggregation}-${subOrder}-${tieBreak}`;
          const def = {
            aggregation,
            order,
            tieBreak,
            decimals: DECIMALS,
            categories: ['c1'],
            period: 'month',
            subscore: { order: subOrder },
          };
          expect((await h.api('PUT', `/v1/boards/${id}`, def)).status).toBe(201);
          const events = generate(id, aggregation.length * 97 + subOrder.length * 13 + tieBreak.length);
          const rand = prng(5);
          const shuffled = shuffle(events, rand);
          for (let i = 0; i < shuffled.length; i += 30)
            await h.postEvents(shuffled.slice(i, i + 30).map((e) => wire(id, e)));

          const board = { aggregation, order, tieBreak, subscore: { order: subOrder } };
          for (const category of ['all', 'c1']) {
            const expected = expectedRows(referenceStandings(events, board, category === 'all' ? undefined : category));
            const path = `/v1/boards/${id}/standings?category=${category}&limit=200`;
            expect(await served(path), `${category} from the cache`).toEqual({ source: 'cache', rows: expected });
            // Paged, the first entry's shared rank comes from the scope, not the page.
            const paged: unknown[] = [];
            for (let offset = 0; offset < expected.length; offset += 3)
              paged.push(...(await served(`${path.replace('limit=200', 'limit=3')}&offset=${offset}`)).rows);
            expect(paged, `${category} paged`).toEqual(expected);
            for (const [rank, member] of expected as Array<[number, string]>) {
              const one = await h.api('GET', `/v1/boards/${id}/standings/${member}?category=${category}`);
              expect(one.body.rank, `${member} placed`).toBe(rank);
            }
          }
          const expectedAll = expectedRows(referenceStandings(events, board));
          const picked = (expectedAll as Array<[number, string]>).filter((_, i) => i % 2 === 0);
          const some = await served(`/v1/boards/${id}/standings?members=${picked.map((e) => e[1]).join(',')}`);
          expect(some.rows).toEqual(expectedAll.filter((_, i) => i % 2 === 0));

          // The Postgres fallback, with Redis' mark of completeness gone and rebuilds held.
          await h.ctx.rebuildQueue.pause();
          try {
            await h.ctx.leaderboard.redis.del(h.ctx.leaderboard.keys.ok(id, '2026-11'));
            expect(await served(`/v1/boards/${id}/standings?limit=200`)).toEqual({
              source: 'database',
              rows: expectedAll,
            });
            const paged: unknown[] = [];
            for (let offset = 0; offset < expectedAll.length; offset += 4)
              paged.push(...(await served(`/v1/boards/${id}/standings?limit=4&offset=${offset}`)).rows);
            expect(paged).toEqual(expectedAll);
            for (const [rank, member] of expectedAll as Array<[number, string]>) {
              expect(
                (await h.api('GET', `/v1/boards/${id}/standings/${member}`)).body.rank,
                `${member} from Postgres`,
              ).toBe(rank);
            }
            expect(
              (await served(`/v1/boards/${id}/standings?members=${picked.map((e) => e[1]).join(',')}`)).rows,
            ).toEqual(expectedAll.filter((_, i) => i % 2 === 0));
          } finally {
            await h.ctx.rebuildQueue.resume();
          }

          // Aggregates damaged, then recomputed from the ledger and rebuilt: the same ranking.
          await sql`UPDATE member_aggregates SET subscore = subscore + 7, version = version + 1 WHERE board_id = ${id}`.execute(
            h.ctx.db,
          );
          const started = await h.api('POST', '/v1/admin/rebuilds', { board: id, fromEvents: true });
          expect(started.status).toBe(202);
          await until(
            'the rebuild',
            async () =>
              (await h.api('GET', `/v1/admin/rebuilds/${started.body.rebuildId}`)).body.state === 'completed'
                ? true
                : undefined,
            {
              timeoutMs: 60_000,
            },
          );
          await h.drain();
          expect(await served(`/v1/boards/${id}/standings?limit=200`)).toEqual({ source: 'cache', rows: expectedAll });
          expect(await verifyLeaderboards(h.ctx, { board: id })).toMatchObject({ differences: [] });

          // Closed: the final results keep the order and the subscores.
          h.clock.set(new Date('2026-12-01T00:10:00Z'));
          try {
            await runTick(h.ctx);
          } finally {
            h.clock.set(NOW);
          }
          const results = await h.api('GET', `/v1/boards/${id}/periods/2026-11/results?limit=200`);
          expect(results.status).toBe(200);
          expect(results.body.entries.map((e: any) => [e.rank, e.member, e.score, e.subscore])).toEqual(expectedAll);
        });
      }
    }
  }
});
