import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

/** The goals and cutoffs routes' inputs: validation, unknown scopes, and answers with nothing ranked. */

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-02T12:00:00Z');
  expect((await h.api('PUT', '/v1/boards/gq', { aggregation: 'best', decimals: 1, categories: ['duel'] })).status).toBe(
    201,
  );
  expect((await h.api('PUT', '/v1/boards/gq-empty', { aggregation: 'best' })).status).toBe(201);
  expect((await h.api('PUT', '/v1/members/gq-late/following', { memberIds: ['gq-1', 'gq-2'] })).status).toBeLessThan(
    300,
  );
  await h.postEvents(
    [1, 2, 3].map((i) => ({ board: 'gq', member: `gq-${i}`, value: i * 1.5, idempotencyKey: `gq-${i}` })),
    false,
  );
  await h.drain();
});
afterAll(() => h.close());

describe('cutoffs', () => {
  it('refuses a query without values or with bad ones, naming the field', async () => {
    for (const [query, path] of [
      ['', 'ranks'],
      ['ranks=', 'ranks.0'],
      ['ranks=0', 'ranks.0'],
      ['ranks=1,1.5', 'ranks.1'],
      ['ranks=-3', 'ranks.0'],
      ['ranks=1,10000002', 'ranks.1'],
      [`ranks=${Array.from({ length: 21 }, (_, i) => i + 1).join(',')}`, 'ranks'],
      ['percents=0', 'percents.0'],
      ['percents=100.5', 'percents.0'],
      ['percents=10,abc', 'percents.1'],
      ['percents=12.34567', 'percents.0'],
      [`percents=${Array.from({ length: 21 }, () => 5).join(',')}`, 'percents'],
      ['ranks=1&ranks=2', 'ranks'],
    ]) {
      const res = await h.api('GET', `/v1/boards/gq/cutoffs?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toBe('validation_failed');
      expect(
        res.body.details.map((d: { path: string }) => d.path),
        query,
      ).toContain(path);
    }
  });

  it('answers 404 for an unknown board, period, category or region', async () => {
    for (const path of [
      '/v1/boards/nope/cutoffs?ranks=1',
      '/v1/boards/gq/cutoffs?ranks=1&period=1999-01',
      '/v1/boards/gq/cutoffs?ranks=1&category=nope',
      '/v1/boards/gq/cutoffs?ranks=1&region=FR',
    ])
      expect((await h.api('GET', path)).status, path).toBe(404);
  });

  it('gives null past the end and the positions percents name', async () => {
    const res = await h.api('GET', '/v1/boards/gq/cutoffs?ranks=1,3,4&percents=1,50,100');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      board: 'gq',
      category: 'all',
      region: 'world',
      total: 3,
      ranks: [
        { rank: 1, score: 4.5 },
        { rank: 3, score: 1.5 },
        { rank: 4, score: null },
      ],
      percents: [
        { percent: 1, rank: 1, score: 4.5 },
        { percent: 50, rank: 2, score: 3 },
        { percent: 100, rank: 3, score: 1.5 },
      ],
    });
  });

  it('answers an empty scope and a period with nothing in it yet', async () => {
    for (const path of [
      '/v1/boards/gq/cutoffs?category=duel&ranks=1&percents=50',
      '/v1/boards/gq-empty/cutoffs?ranks=1&percents=50',
    ]) {
      const res = await h.api('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toMatchObject({
        total: 0,
        ranks: [{ rank: 1, score: null }],
        percents: [{ percent: 50, rank: 1, score: null }],
      });
    }
  });
});

describe('goals', () => {
  it('answers 404 for an invalid member id and an unknown scope, 400 for a bad query', async () => {
    expect((await h.api('GET', '/v1/boards/gq/standings/bad%20id/goals')).status).toBe(404);
    expect((await h.api('GET', '/v1/boards/nope/standings/gq-1/goals')).status).toBe(404);
    expect((await h.api('GET', '/v1/boards/gq/standings/gq-1/goals?period=1999-01')).status).toBe(404);
    expect((await h.api('GET', '/v1/boards/gq/standings/gq-1/goals?category=nope')).status).toBe(404);
    const bad = await h.api('GET', `/v1/boards/gq/standings/gq-1/goals?period=${'x'.repeat(40)}`);
    expect([bad.status, bad.body.details[0].path]).toEqual([400, 'period']);
  });

  it('gives a member without a score null rank, score and gaps, with the score needed', async () => {
    const res = await h.api('GET', '/v1/boards/gq/standings/gq-late/goals');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      member: 'gq-late',
      rank: null,
      score: null,
      next: null,
      // Followed and ranked, lowest first.
      following: [
        { member: 'gq-1', rank: 3, score: 1.5, needed: 1.6, gap: null },
        { member: 'gq-2', rank: 2, score: 3, needed: 3.1, gap: null },
      ],
      awards: [{ award: 'top1', rank: 1, score: 4.5, needed: 4.6, gap: null }],
      league: null,
    });
  });

  it('gives a ranked member the entry above and the tiers not reached; none at the top', async () => {
    const third = await h.api('GET', '/v1/boards/gq/standings/gq-1/goals');
    expect(third.body).toMatchObject({
      rank: 3,
      score: 1.5,
      next: { member: 'gq-2', rank: 2, score: 3, needed: 3.1, gap: 1.6 },
      following: [],
      awards: [{ award: 'top1', rank: 1, score: 4.5, needed: 4.6, gap: 3.1 }],
    });
    const first = await h.api('GET', '/v1/boards/gq/standings/gq-3/goals');
    expect(first.body).toMatchObject({ rank: 1, score: 4.5, next: null, following: [], awards: [] });
    const empty = await h.api('GET', '/v1/boards/gq-empty/standings/gq-1/goals');
    expect(empty.body).toMatchObject({ rank: null, score: null, next: null, following: [], awards: [], league: null });
  });
});
