import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-02T10:00:00Z');
});
afterAll(() => h.close());

describe('board definitions', () => {
  it('creates with defaults (201), then updates (200)', async () => {
    const created = await h.api('PUT', '/v1/boards/races', { aggregation: 'best', order: 'asc', decimals: 3 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: 'races',
      displayName: 'races',
      aggregation: 'best',
      order: 'asc',
      tieBreak: 'first',
      period: 'month',
      timezone: 'UTC',
      decimals: 3,
      minValue: null,
      maxValue: null,
      categories: [],
      regions: false,
      graceSeconds: 300,
      awards: { tiers: [1, 10, 50, 100], regionTiers: [50], followingTop1: true },
      currentPeriod: {
        key: '2026-12',
        startsAt: '2026-12-01T00:00:00.000Z',
        endsAt: '2027-01-01T00:00:00.000Z',
        state: 'open',
      },
    });
    const updated = await h.api('PUT', '/v1/boards/races', {
      aggregation: 'best',
      order: 'asc',
      decimals: 3,
      displayName: 'Races',
    });
    expect(updated.status).toBe(200);
    expect(updated.body.displayName).toBe('Races');
    const list = await h.api('GET', '/v1/boards');
    expect(list.body.boards.map((b: any) => b.id)).toEqual(['races']);
    expect((await h.api('GET', '/v1/boards/races')).body.displayName).toBe('Races');
  });

  it('answers 400 naming the field for a bad definition or id, and 404 for an unknown board', async () => {
    const bad = await h.api('PUT', '/v1/boards/x', {
      aggregation: 'median',
      timezone: 'Mars/Base',
      decimals: 9,
      colour: 'red',
    });
    expect(bad.status).toBe(400);
    const paths = bad.body.details.map((d: any) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['aggregation', 'timezone', 'decimals', 'colour']));
    expect((await h.api('PUT', '/v1/boards/Bad!Id', { aggregation: 'sum' })).status).toBe(400);
    expect(
      (await h.api('PUT', '/v1/boards/mm', { aggregation: 'sum', minValue: 5, maxValue: 1 })).body.details[0].path,
    ).toBe('minValue');
    expect((await h.api('GET', '/v1/boards/unknown')).status).toBe(404);
    expect((await h.api('GET', '/v1/boards/unknown/standings')).body.message).toContain('board');
  });

  it('refuses (409) to change a fixed field once the board has events, and allows other changes', async () => {
    await h.api('PUT', '/v1/boards/fixed', { aggregation: 'sum', categories: ['a'] });
    // Without events a fixed field may still change.
    expect((await h.api('PUT', '/v1/boards/fixed', { aggregation: 'best', categories: ['a'] })).status).toBe(200);
    const posted = await h.api('POST', '/v1/events?wait=true', {
      board: 'fixed',
      member: 'm',
      value: 1,
      idempotencyKey: 'fx-1',
    });
    expect(posted.body.results[0].status).toBe('applied');
    for (const change of [
      { aggregation: 'sum' },
      { order: 'asc' },
      { tieBreak: 'shared' },
      { period: 'day' },
      { timezone: 'Asia/Tokyo' },
      { decimals: 2 },
    ]) {
      const res = await h.api('PUT', '/v1/boards/fixed', { aggregation: 'best', categories: ['a'], ...change });
      expect(res.status).toBe(409);
      expect(res.body.details.map((d: any) => d.path)).toEqual(Object.keys(change));
    }
    const ok = await h.api('PUT', '/v1/boards/fixed', {
      aggregation: 'best',
      categories: ['a', 'b'],
      displayName: 'Fixed',
      graceSeconds: 60,
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ categories: ['a', 'b'], graceSeconds: 60 });
    // The new category is accepted at once by intake.
    const next = await h.api('POST', '/v1/events?wait=true', {
      board: 'fixed',
      member: 'm',
      value: 2,
      idempotencyKey: 'fx-2',
      category: 'b',
    });
    expect(next.body.results[0]).toMatchObject({ status: 'applied', score: 2 });
  });

  it('answers 404 naming the unknown category or region', async () => {
    const cat = await h.api('GET', '/v1/boards/fixed/standings?category=zzz');
    expect(cat.status).toBe(404);
    expect(cat.body.message).toContain('category "zzz"');
    const region = await h.api('GET', '/v1/boards/fixed/standings?region=FR');
    expect(region.status).toBe(404);
    expect(region.body.message).toContain('region');
  });
});

describe('health', () => {
  it('reports liveness and readiness of Postgres, Redis, its key layout, migrations and stored functions', async () => {
    expect((await h.api('GET', '/healthz', undefined, null)).body).toEqual({ status: 'ok' });
    const ready = await h.api('GET', '/readyz', undefined, null);
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({
      postgres: 'ok',
      redis: 'ok',
      'leaderboard-redis': 'ok',
      'leaderboard-layout': 'ok',
      migrations: 'ok',
      functions: 'ok',
    });
  });
});
