import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTick } from '../../src/services/period-tick.js';
import { findMembersByPrefix } from '../../src/storage/postgres/member-search-repository.js';
import { createHarness, type Harness } from '../support/harness.js';
import { plansOf } from '../support/query-plans.js';
import { until } from '../support/poll.js';

interface Member {
  id: string;
  displayName: string | null;
  region: string | null;
  excluded: boolean;
}

/**
 * The members searched. Ids and names are ASCII, so byte order is JavaScript's string order
 * and lower case is toLowerCase. `%`, `_` and `\` stand in names (and `_` in ids) beside a
 * member that a wildcard would also match.
 */
const MEMBERS: Member[] = [
  { id: 'ab_1', displayName: 'Zed', region: 'FR', excluded: false },
  { id: 'abX1', displayName: null, region: null, excluded: false },
  { id: 'abc1', displayName: 'Abacus', region: 'DE', excluded: false },
  { id: 'fa-1', displayName: 'Falcon', region: 'FR', excluded: false },
  { id: 'fa-2', displayName: 'falconer', region: null, excluded: false },
  { id: 'fa-3', displayName: 'FALCON Ace', region: 'JP', excluded: false },
  { id: 'falc', displayName: 'Falcon too', region: 'FR', excluded: false },
  { id: 'hawk', displayName: 'falcon kin', region: null, excluded: false },
  { id: 'pct-1', displayName: '100% Pure', region: null, excluded: false },
  { id: 'pct-2', displayName: '100 Percent', region: null, excluded: false },
  { id: 'pct-3', displayName: '1000 Club', region: null, excluded: false },
  { id: 'bs-1', displayName: 'back\\slash', region: null, excluded: false },
  { id: 'bs-2', displayName: 'backXslash', region: null, excluded: false },
  { id: 'us-1', displayName: 'snake_case', region: null, excluded: false },
  { id: 'us-2', displayName: 'snakeXcase', region: null, excluded: false },
  { id: 'cheat', displayName: 'Falcon Cheat', region: 'DE', excluded: true },
  ...Array.from({ length: 25 }, (_, i) => ({
    id: `bulk-${String(i).padStart(2, '0')}`,
    displayName: `Bulk ${24 - i}`,
    region: null,
    excluded: false,
  })),
];

/** What a search should find, worked out from MEMBERS: ids first, then names, each once. */
function expected(q: string, limit = 20, members: Member[] = MEMBERS): Member[] {
  const byId = members.filter((m) => m.id.startsWith(q)).sort((a, b) => (a.id < b.id ? -1 : 1));
  const shown = new Set(byId.map((m) => m.id));
  const name = (m: Member) => m.displayName!.toLowerCase();
  const byName = members
    .filter((m) => !shown.has(m.id) && m.displayName !== null && name(m).startsWith(q.toLowerCase()))
    .sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : a.id < b.id ? -1 : 1));
  return [...byId, ...byName].slice(0, limit);
}

const search = (h: Harness, query: Record<string, string>, key?: string) =>
  h.api('GET', `/v1/members?${new URLSearchParams(query).toString()}`, undefined, key);

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
  h.clock.set('2026-12-02T12:00:00Z');
  const res = await h.api('PUT', '/v1/members', {
    members: MEMBERS.map(({ id, displayName, region }) => ({ id, displayName, region })),
  });
  expect(res.status).toBe(200);
  for (const m of MEMBERS.filter((x) => x.excluded)) {
    expect((await h.api('POST', `/v1/members/${m.id}/exclusion`, { reason: 'test' })).status).toBe(200);
  }
});

afterAll(() => h?.close());

describe('GET /v1/members?q=', () => {
  it('finds members by id prefix first, then by display name prefix in any case, each once', async () => {
    for (const q of ['ab', 'fa', 'fal', 'FAL', 'Falc', 'falc', 'falcon ', 'hawk', '100', 'Bulk 1', 'zzz', 'cheat']) {
      const res = await search(h, { q });
      expect(res.status, q).toBe(200);
      expect(res.body, q).toEqual({ members: expected(q) });
    }
    // The member found by id is not found again by name.
    const falc = (await search(h, { q: 'falc' })).body.members.map((m: Member) => m.id);
    expect(falc[0]).toBe('falc');
    expect(falc.filter((id: string) => id === 'falc')).toHaveLength(1);
    // An excluded member is found, and shown excluded.
    expect((await search(h, { q: 'Falcon Ch' })).body.members).toEqual([
      { id: 'cheat', displayName: 'Falcon Cheat', region: 'DE', excluded: true },
    ]);
  });

  it('takes %, _ and \\ in q as the characters themselves', async () => {
    const cases: Array<[string, string[]]> = [
      ['ab_', ['ab_1']],
      ['100%', ['pct-1']],
      ['back\\', ['bs-1']],
      ['snake_', ['us-1']],
      ['%', []],
      ['_', []],
      ['\\', []],
    ];
    for (const [q, ids] of cases) {
      const res = await search(h, { q });
      expect(
        res.body.members.map((m: Member) => m.id),
        q,
      ).toEqual(ids);
      expect(res.body, q).toEqual({ members: expected(q) });
    }
  });

  it('answers at most limit members, 20 unless asked', async () => {
    expect(expected('bulk', 100)).toHaveLength(25);
    expect((await search(h, { q: 'bulk' })).body).toEqual({ members: expected('bulk', 20) });
    expect((await search(h, { q: 'bulk', limit: '100' })).body).toEqual({ members: expected('bulk', 100) });
    for (const limit of [1, 3]) {
      expect((await search(h, { q: 'fa', limit: String(limit) })).body).toEqual({ members: expected('fa', limit) });
    }
    // Names fill the places the ids leave, in name order.
    expect((await search(h, { q: 'Bulk', limit: '2' })).body.members.map((m: Member) => m.id)).toEqual([
      'bulk-24',
      'bulk-23',
    ]);
  });

  it('refuses a missing, empty, too long or unsafe q and a bad limit with a 400 naming the field', async () => {
    const refusals: Array<[Record<string, string>, string]> = [
      [{}, 'q'],
      [{ q: '' }, 'q'],
      [{ q: 'x'.repeat(65) }, 'q'],
      [{ q: 'a\u0000b' }, 'q'],
      [{ q: 'fa', limit: '0' }, 'limit'],
      [{ q: 'fa', limit: '101' }, 'limit'],
      [{ q: 'fa', limit: '2.5' }, 'limit'],
      [{ q: 'fa', limit: 'many' }, 'limit'],
    ];
    for (const [query, field] of refusals) {
      const res = await search(h, query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.details.map((d: { path: string }) => d.path)).toEqual([field]);
    }
    const twice = await h.api('GET', '/v1/members?q=a&q=b');
    expect([twice.status, twice.body.details?.[0]?.path]).toEqual([400, 'q']);
    expect((await search(h, { q: 'x'.repeat(64) })).status).toBe(200);
  });

  it('is for admin keys only', async () => {
    for (const role of ['read', 'ingest'] as const) {
      const { key } = (await h.api('POST', '/v1/admin/keys', { name: `search-${role}`, role })).body;
      const res = await search(h, { q: 'fa' }, key);
      expect(res.status, role).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
    expect((await search(h, { q: 'fa' }, 'not-a-key')).status).toBe(401);
  });

  it('finds an erased member by neither their former id, nor name, nor their pseudonym', async () => {
    expect(
      (await h.api('PUT', '/v1/boards/daily', { aggregation: 'sum', period: 'day', graceSeconds: 0 })).status,
    ).toBe(201);
    expect((await h.api('PUT', '/v1/members/gone-1', { displayName: 'Vanishing Act', region: 'FR' })).status).toBe(200);
    await h.postEvents([{ board: 'daily', member: 'gone-1', value: 5, idempotencyKey: 'gone-1-a' }]);
    expect((await search(h, { q: 'gone' })).body.members.map((m: Member) => m.id)).toEqual(['gone-1']);
    expect((await search(h, { q: 'vanish' })).body.members.map((m: Member) => m.id)).toEqual(['gone-1']);
    // A closed period keeps the member's place under a pseudonym once erased.
    h.clock.set('2026-12-03T00:05:00Z');
    expect((await runTick(h.ctx)).closed).toContain('daily/2026-12-02');

    const { erasureId } = (await h.api('DELETE', '/v1/members/gone-1')).body;
    await until('the erasure is done', async () =>
      (await h.api('GET', `/v1/admin/erasures/${erasureId}`)).body.state === 'done' ? true : undefined,
    );
    const results = await h.ctx.db
      .selectFrom('period_results')
      .select('member_id')
      .where('board_id', '=', 'daily')
      .execute();
    const pseudonym = results.map((r) => r.member_id).find((id) => id.startsWith('erased:'));
    expect(pseudonym).toBeDefined();
    for (const q of ['gone', 'gone-1', 'Vanishing', 'vanish', 'erased', pseudonym!]) {
      expect((await search(h, { q })).body, q).toEqual({ members: [] });
    }
  });
});

describe('the search query', () => {
  it('reads members through the primary key and the name index, never a sequential scan', async () => {
    // Enough members for the planner to choose by cost, ids and names sharing prefixes with many.
    await sql`
      INSERT INTO members (id, display_name)
      SELECT 'seed-' || lpad(i::text, 6, '0'), CASE WHEN i % 3 = 0 THEN NULL ELSE 'Seed ' || i END
        FROM generate_series(1, 30000) i`.execute(h.ctx.db);
    await sql`ANALYZE members`.execute(h.ctx.db);

    for (const q of ['seed-0123', 'seed', 'Seed 12', 's', '100%']) {
      const [nodes] = await plansOf(h.env.DATABASE_URL, (db) => findMembersByPrefix(db, q, 20), { analyze: false });
      expect(
        nodes!.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']),
        q,
      ).toEqual([]);
      expect(new Set(nodes!.flatMap((n) => n['Index Name'] ?? [])), q).toEqual(
        new Set(['members_pkey', 'members_display_name_prefix_idx']),
      );
    }
  });
});
