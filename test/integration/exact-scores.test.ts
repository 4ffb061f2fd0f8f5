import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const TWO_40 = 2 ** 40;

describe('exact decimals', () => {
  it('sums 0.1 + 0.2 to exactly 0.3 and ties it with a posted 0.3', async () => {
    await h.api('PUT', '/v1/boards/dec', { aggregation: 'sum', decimals: 2, tieBreak: 'shared', period: 'all' });
    await h.postEvents([
      { board: 'dec', member: 'a', value: 0.1, idempotencyKey: 'dec-a1' },
      { board: 'dec', member: 'a', value: 0.2, idempotencyKey: 'dec-a2' },
      { board: 'dec', member: 'b', value: 0.3, idempotencyKey: 'dec-b1' },
      { board: 'dec', member: 'c', value: 0.29, idempotencyKey: 'dec-c1' },
    ]);
    const res = await h.api('GET', '/v1/boards/dec/standings?period=all');
    expect(res.body.entries).toEqual([
      { rank: 1, member: 'a', displayName: null, score: 0.3 },
      { rank: 1, member: 'b', displayName: null, score: 0.3 },
      { rank: 3, member: 'c', displayName: null, score: 0.29 },
    ]);
  });

  it('refuses a value with more decimals than the board allows (400, nothing enqueued)', async () => {
    const res = await h.api('POST', '/v1/events', { board: 'dec', member: 'a', value: 0.125, idempotencyKey: 'dec-x' });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([{ path: 'value', message: 'has more than 2 decimals' }]);
  });
});

describe('the ±2^40 range', () => {
  it('keeps ties exact between aggregates one unit apart near 2^40', async () => {
    await h.api('PUT', '/v1/boards/huge', { aggregation: 'best', tieBreak: 'shared', period: 'all' });
    await h.postEvents([
      { board: 'huge', member: 'x', value: TWO_40, idempotencyKey: 'huge-x' },
      { board: 'huge', member: 'y', value: TWO_40 - 1, idempotencyKey: 'huge-y' },
      { board: 'huge', member: 'z', value: TWO_40, idempotencyKey: 'huge-z' },
      { board: 'huge', member: 'n', value: -TWO_40, idempotencyKey: 'huge-n' },
    ]);
    const res = await h.api('GET', '/v1/boards/huge/standings?period=all');
    expect(res.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual([
      [1, 'x', TWO_40],
      [1, 'z', TWO_40],
      [3, 'y', TWO_40 - 1],
      [4, 'n', -TWO_40],
    ]);
  });

  it('refuses a single value beyond 2^40 at intake', async () => {
    const res = await h.api('POST', '/v1/events', {
      board: 'huge',
      member: 'x',
      value: TWO_40 + 1,
      idempotencyKey: 'huge-over',
    });
    expect(res.status).toBe(400);
    expect(res.body.details[0].path).toBe('value');
  });

  it('rejects, with out_of_range, events whose sum would leave the range, and keeps the rest', async () => {
    await h.api('PUT', '/v1/boards/bigsum', { aggregation: 'sum', period: 'all', decimals: 3 });
    const limit = TWO_40 / 1000; // 2^40 after scaling by 10^3
    const first = await h.postEvents([{ board: 'bigsum', member: 's', value: limit - 1, idempotencyKey: 'big-1' }]);
    expect(first[0]!.status).toBe('applied');
    const second = await h.postEvents([
      { board: 'bigsum', member: 's', value: 2, idempotencyKey: 'big-2' },
      { board: 'bigsum', member: 't', value: 2, idempotencyKey: 'big-3' },
    ]);
    expect(second).toMatchObject([
      { status: 'rejected', reason: 'out_of_range' },
      { status: 'applied', score: 2 },
    ]);
    const s = await h.api('GET', '/v1/boards/bigsum/standings/s?period=all');
    expect(s.body.score).toBe(limit - 1);
    expect((await h.api('GET', '/v1/events/big-2')).body).toMatchObject({ status: 'rejected', reason: 'out_of_range' });
    // Only the member whose sum overflows is refused, not members whose ids look alike.
    const others = await h.postEvents([
      { board: 'bigsum', member: 's', value: limit, idempotencyKey: 'big-5' },
      { board: 'bigsum', member: 'all', value: 1, idempotencyKey: 'big-6' },
      { board: 'bigsum', member: 'bigsum', value: 1, idempotencyKey: 'big-7' },
    ]);
    expect(others.map((r) => r.status)).toEqual(['rejected', 'applied', 'applied']);
    // Exactly at the limit is still allowed.
    const third = await h.postEvents([{ board: 'bigsum', member: 's', value: 1, idempotencyKey: 'big-4' }]);
    expect(third[0]).toMatchObject({ status: 'applied', score: limit });
  });
});
