import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTick } from '../../src/services/period-tick.js';
import { rankedRegions } from '../../src/storage/postgres/regions-repository.js';
import { createHarness, type Harness } from '../support/harness.js';
import { plansOf } from '../support/query-plans.js';

/**
 * A model of who is ranked, kept by the test beside what it sends: the regions of a period
 * are those of its members with an event still counted, not excluded, with a region. Ids and
 * regions are ASCII, so byte order is JavaScript's string order.
 */
class Model {
  readonly region = new Map<string, string | null>();
  readonly excluded = new Set<string>();
  /** Per period, per member, the keys of the events still counted. */
  readonly counted = new Map<string, Map<string, Set<string>>>();

  scored(period: string, member: string, key: string): void {
    const members = this.counted.get(period) ?? new Map<string, Set<string>>();
    this.counted.set(period, members);
    members.set(member, (members.get(member) ?? new Set()).add(key));
  }

  voided(period: string, member: string, key: string): void {
    this.counted.get(period)!.get(member)!.delete(key);
  }

  regionsOf(period: string): string[] {
    const found = new Set<string>();
    for (const [member, keys] of this.counted.get(period) ?? []) {
      const region = this.region.get(member) ?? null;
      if (keys.size > 0 && !this.excluded.has(member) && region !== null) found.add(region);
    }
    return [...found].sort();
  }
}

const PROFILES: Record<string, string | null> = {
  r01: 'FR',
  r02: 'FR',
  r03: 'DE',
  r04: 'JP',
  r05: 'eu-west',
  r06: 'BR',
  r07: 'br',
  r08: null,
  r09: 'ZZ',
  r10: 'XX',
  r11: 'NL',
  r12: 'FR',
  r13: 'US',
};

let h: Harness;
const model = new Model();
const regions = (board: string, query = '') => h.api('GET', `/v1/boards/${board}/regions${query}`);

async function post(period: string, at: string, scores: Array<[string, number]>): Promise<void> {
  const events = scores.map(([member, value]) => ({
    board: 'reg',
    member,
    value,
    occurredAt: at,
    idempotencyKey: `${period}-${member}`,
  }));
  const results = await h.postEvents(events);
  expect(results.map((r: { status: string }) => r.status)).toEqual(events.map(() => 'applied'));
  for (const e of events) model.scored(period, e.member, e.idempotencyKey);
}

beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-01T12:00:00Z');
  expect(
    (await h.api('PUT', '/v1/boards/reg', { aggregation: 'sum', period: 'day', graceSeconds: 0, regions: true }))
      .status,
  ).toBe(201);
  expect(
    (
      await h.api('PUT', '/v1/members', {
        members: Object.entries(PROFILES).map(([id, region]) => ({ id, region })),
      })
    ).status,
  ).toBe(200);
  for (const [id, region] of Object.entries(PROFILES)) model.region.set(id, region);
});

afterAll(() => h?.close());

describe('GET /v1/boards/{id}/regions', () => {
  it("lists the regions of a closed period's final results, whatever happens to its members afterwards", async () => {
    await post('2026-12-01', '2026-12-01T10:00:00Z', [
      ['r01', 5],
      ['r03', 7],
      ['r09', 9],
    ]);
    const atClose = model.regionsOf('2026-12-01');
    expect(atClose).toEqual(['DE', 'FR', 'ZZ']);
    expect((await regions('reg')).body.regions).toEqual(atClose);

    h.clock.set('2026-12-02T00:05:00Z');
    expect((await runTick(h.ctx)).closed).toContain('reg/2026-12-01');
    expect((await h.api('POST', '/v1/members/r09/exclusion', { reason: 'bot' })).status).toBe(200);
    model.excluded.add('r09');

    const closed = await regions('reg', '?period=2026-12-01');
    expect(closed.status).toBe(200);
    expect(closed.body).toEqual({
      board: 'reg',
      period: {
        key: '2026-12-01',
        startsAt: '2026-12-01T00:00:00.000Z',
        endsAt: '2026-12-02T00:00:00.000Z',
        state: 'closed',
      },
      regions: atClose,
    });
    // Final: cacheable for a day, like every answer about a closed period.
    expect(closed.headers.get('cache-control')).toContain('max-age=86400');
  });

  it('lists the regions of the members ranked now in an open period, sorted by their bytes', async () => {
    // The current day, 2026-12-02, has no event yet: it is shown, with nothing in it.
    const before = await regions('reg');
    expect(before.body).toEqual({
      board: 'reg',
      period: expect.objectContaining({ key: '2026-12-02', state: 'open' }),
      regions: [],
    });

    await post('2026-12-02', '2026-12-02T00:04:00Z', [
      ['r01', 1],
      ['r02', 2],
      ['r03', 3],
      ['r04', 4],
      ['r05', 5],
      ['r06', 6],
      ['r07', 7],
      ['r08', 8],
      ['r09', 9],
      ['r10', 10],
      ['r11', 11],
      ['r12', 12],
    ]);
    // r10's only event voided, r12 excluded (FR keeps r01 and r02), r11 moves from NL to BE,
    // r13 has a region and no event.
    expect((await h.api('POST', '/v1/events/2026-12-02-r10/void?board=reg', { reason: 'replay' })).status).toBe(200);
    model.voided('2026-12-02', 'r10', '2026-12-02-r10');
    expect((await h.api('POST', '/v1/members/r12/exclusion', { reason: 'smurf' })).status).toBe(200);
    model.excluded.add('r12');
    expect((await h.api('PUT', '/v1/members/r11', { region: 'BE' })).status).toBe(200);
    model.region.set('r11', 'BE');

    const expected = model.regionsOf('2026-12-02');
    expect(expected).toEqual(['BE', 'BR', 'DE', 'FR', 'JP', 'br', 'eu-west']);
    for (const query of ['', '?period=current', '?period=2026-12-02']) {
      const res = await regions('reg', query);
      expect(res.status, query).toBe(200);
      expect(res.body, query).toEqual({
        board: 'reg',
        period: {
          key: '2026-12-02',
          startsAt: '2026-12-02T00:00:00.000Z',
          endsAt: '2026-12-03T00:00:00.000Z',
          state: 'open',
        },
        regions: expected,
      });
    }
    // Each region listed is a scope with someone in it; one not listed has no one.
    await h.drain();
    for (const region of [...expected, 'ZZ', 'XX', 'NL', 'US']) {
      const page = await h.api('GET', `/v1/boards/reg/standings?region=${region}&limit=1`);
      expect(page.body.total > 0, region).toBe(expected.includes(region));
    }

    // A restored member's region is back; the closed period's list does not move.
    expect((await h.api('DELETE', '/v1/members/r09/exclusion')).status).toBe(200);
    model.excluded.delete('r09');
    expect((await regions('reg')).body.regions).toEqual(model.regionsOf('2026-12-02'));
    expect(model.regionsOf('2026-12-02')).toContain('ZZ');
    expect((await regions('reg', '?period=2026-12-01')).body.regions).toEqual(['DE', 'FR', 'ZZ']);
  });

  it('lists none on a board that does not rank by region', async () => {
    expect((await h.api('PUT', '/v1/boards/flat', { aggregation: 'sum', period: 'day' })).status).toBe(201);
    await h.postEvents([
      { board: 'flat', member: 'r01', value: 1, idempotencyKey: 'flat-1' },
      { board: 'flat', member: 'r03', value: 1, idempotencyKey: 'flat-2' },
    ]);
    expect((await regions('flat')).body).toMatchObject({ board: 'flat', regions: [] });
  });

  it('answers 404 for an unknown board or period and 400 for a bad period, as the other period routes', async () => {
    // The same request to the standings: the same status and message.
    for (const [board, query] of [
      ['nope', ''],
      ['reg', '?period=2026-11-30'],
      ['reg', '?period=not-a-key'],
    ] as const) {
      const res = await regions(board, query);
      const standings = await h.api('GET', `/v1/boards/${board}/standings${query}`);
      expect([res.status, res.body.error], `${board}${query}`).toEqual([404, 'not_found']);
      expect(res.body.message).toBe(standings.body.message);
    }
    const long = await regions('reg', `?period=${'x'.repeat(33)}`);
    expect([long.status, long.body.details.map((d: { path: string }) => d.path)]).toEqual([400, ['period']]);
    // Outside its window, a board has no current period.
    expect(
      (
        await h.api('PUT', '/v1/boards/later', {
          aggregation: 'best',
          regions: true,
          window: { startsAt: '2027-01-01T00:00:00Z' },
        })
      ).status,
    ).toBe(201);
    const outside = await regions('later');
    const standings = await h.api('GET', '/v1/boards/later/standings');
    expect([outside.status, outside.body.message]).toEqual([404, standings.body.message]);
    expect((await regions('later', '?period=all')).status).toBe(404);
  });
});

describe('the regions query', () => {
  it('is a loose index scan of member_aggregates_region_rank_idx, never a sequential scan', async () => {
    // 40,000 ranked members in 20 regions (and none) in the open period of a board of their own.
    expect((await h.api('PUT', '/v1/boards/big', { aggregation: 'best', period: 'day', regions: true })).status).toBe(
      201,
    );
    await h.postEvents([{ board: 'big', member: 'r01', value: 1, idempotencyKey: 'big-r01' }]);
    const codes = Array.from({ length: 20 }, (_, i) => `Q${String.fromCharCode(65 + i)}`);
    await sql`
      INSERT INTO member_aggregates (board_id, period_key, category, member_id, value, reached_at, last_key, event_count, region)
      SELECT 'big', '2026-12-02', c.category, 'seed-' || i, i, now(), 'k' || i, 1,
             CASE WHEN i % 21 = 0 THEN NULL ELSE (${codes}::text[])[i % 20 + 1] END
        FROM generate_series(1, 40000) i, (VALUES ('all'), ('solo')) c(category)`.execute(h.ctx.db);
    await sql`ANALYZE member_aggregates`.execute(h.ctx.db);
    expect((await regions('big')).body.regions).toEqual(['FR', ...codes].sort());

    const [nodes] = await plansOf(h.env.DATABASE_URL, (db) => rankedRegions(db, 'big', '2026-12-02'), {
      analyze: true,
    });
    expect(nodes!.some((n) => n['Node Type'] === 'Recursive Union')).toBe(true);
    const onAggregates = nodes!.filter((n) => n['Relation Name'] === 'member_aggregates');
    expect(onAggregates.length).toBeGreaterThanOrEqual(3);
    expect(onAggregates.map((n) => [/^Index (Only )?Scan$/.test(n['Node Type']), n['Index Name']])).toEqual(
      onAggregates.map(() => [true, 'member_aggregates_region_rank_idx']),
    );
  });
  it('lists at most 1000 regions, the first by their bytes', async () => {
    expect((await h.api('PUT', '/v1/boards/many', { aggregation: 'best', period: 'day', regions: true })).status).toBe(
      201,
    );
    await h.postEvents([{ board: 'many', member: 'r01', value: 1, idempotencyKey: 'many-r01' }]);
    await sql`
      INSERT INTO member_aggregates (board_id, period_key, category, member_id, value, reached_at, last_key, event_count, region)
      SELECT 'many', '2026-12-02', 'all', 'seed-' || i, i, now(), 'k' || i, 1, 'Z' || lpad(i::text, 4, '0')
        FROM generate_series(1, 1005) i`.execute(h.ctx.db);
    const expected = ['FR', ...Array.from({ length: 1005 }, (_, i) => `Z${String(i + 1).padStart(4, '0')}`)]
      .sort()
      .slice(0, 1000);
    expect((await regions('many')).body.regions).toEqual(expected);
  });
});
