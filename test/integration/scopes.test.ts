import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { referenceStandings, type RefEvent } from '../support/reference.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-02T12:00:00Z');
});
afterAll(() => h.close());

const REGIONS: Record<string, string | null> = { ana: 'FR', bob: 'FR', cem: 'DE', dan: null, eve: 'DE' };

describe('category and region scopes', () => {
  it('ranks every (category, region) scope with the member region at apply time', async () => {
    await h.api('PUT', '/v1/boards/arena', {
      aggregation: 'sum',
      categories: ['kills', 'assists'],
      regions: true,
      tieBreak: 'member',
    });
    // Profiles (PUT /v1/members) are another issue; the test seeds them directly.
    await h.ctx.db
      .insertInto('members')
      .values(
        Object.entries(REGIONS).map(([id, region]) => ({ id, region, display_name: `Player ${id.toUpperCase()}` })),
      )
      .execute();
    const events: RefEvent[] = [];
    let n = 0;
    for (const member of Object.keys(REGIONS)) {
      for (const category of ['kills', 'assists', undefined]) {
        for (let i = 0; i < 3; i += 1) {
          n += 1;
          events.push({
            key: `sc-${n}`,
            member,
            units: (n * 7) % 11,
            atMs: Date.parse('2026-12-02T11:00:00Z') + n * 1000,
            category,
          });
        }
      }
    }
    const res = await h.api('POST', '/v1/events', {
      events: events.map((e) => ({
        board: 'arena',
        member: e.member,
        value: e.units,
        idempotencyKey: e.key,
        occurredAt: new Date(e.atMs).toISOString(),
        ...(e.category ? { category: e.category } : {}),
      })),
    });
    expect(res.status).toBe(202);
    await h.drain();

    const board = { aggregation: 'sum', order: 'desc', tieBreak: 'member' } as const;
    for (const category of ['all', 'kills', 'assists']) {
      for (const region of ['world', 'FR', 'DE', 'JP']) {
        const inScope = events.filter(
          (e) =>
            (category === 'all' || e.category === category) && (region === 'world' || REGIONS[e.member] === region),
        );
        const expected = referenceStandings(inScope, board);
        const page = await h.api('GET', `/v1/boards/arena/standings?category=${category}&region=${region}`);
        expect(page.status).toBe(200);
        expect(page.body).toMatchObject({ board: 'arena', category, region, total: expected.length, source: 'cache' });
        expect(page.body.entries).toEqual(
          expected.map((e) => ({
            rank: e.rank,
            member: e.member,
            score: e.units,
            displayName: `Player ${e.member.toUpperCase()}`,
          })),
        );
      }
    }
    // A member outside a region scope has no rank there.
    const outside = await h.api('GET', '/v1/boards/arena/standings/cem?region=FR');
    expect(outside.body).toMatchObject({ member: 'cem', rank: null, score: null, total: 2 });
  });
});
