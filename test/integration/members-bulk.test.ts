import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';

/** Totals on the region board; distinct, so ranks are positions. */
const SCORES: Record<string, number> = { m1: 60, m2: 50, m3: 40, m4: 30, m5: 20, m6: 10 };
const INITIAL_REGIONS: Record<string, string | null> = { m1: 'FR', m2: 'FR', m3: 'DE', m4: 'DE', m5: null, m6: 'FR' };

/** The batch under test; m1 appears twice (the later entry applies after the earlier one). */
const BATCH = [
  { id: 'm1', region: 'DE', displayName: 'Em One', following: ['m2', 'm3', 'm1', 'm2'] },
  { id: 'm3', region: null },
  { id: 'm5', region: 'FR' },
  { id: 'm6', displayName: 'Six' },
  { id: 'm7', displayName: 'New', region: 'DE' },
  { id: 'm2', following: ['m1'] },
  { id: 'm1', displayName: 'Em One Again' },
];

/** What the batch leaves, worked out by hand from BATCH. */
const FINAL_REGIONS: Record<string, string | null> = { ...INITIAL_REGIONS, m1: 'DE', m3: null, m5: 'FR', m7: 'DE' };

/** Standings of a region scope as the test expects them: members of that region by score, highest first. */
function expectedEntries(region: string | null): Array<{ rank: number; member: string; score: number }> {
  return Object.entries(SCORES)
    .filter(([member]) => region === null || FINAL_REGIONS[member] === region)
    .sort(([, a], [, b]) => b - a)
    .map(([member, score], i) => ({ rank: i + 1, member, score }));
}

/** The same batch sent through the single routes, entry by entry: the reference. */
async function applyOneByOne(h: Harness): Promise<void> {
  for (const { id, following, ...profile } of BATCH) {
    expect((await h.api('PUT', `/v1/members/${id}`, profile)).status).toBe(200);
    if (following)
      expect((await h.api('PUT', `/v1/members/${id}/following`, { memberIds: following })).status).toBe(200);
  }
}

async function seed(h: Harness): Promise<void> {
  expect((await h.api('PUT', '/v1/boards/reg', { aggregation: 'sum', period: 'all', regions: true })).status).toBe(201);
  for (const [id, region] of Object.entries(INITIAL_REGIONS)) {
    expect((await h.api('PUT', `/v1/members/${id}`, { region })).status).toBe(200);
  }
  await h.postEvents(
    Object.entries(SCORES).map(([member, value]) => ({ board: 'reg', member, value, idempotencyKey: `reg-${member}` })),
  );
}

/** Everything the member routes and the standings show of the members, for comparison. */
async function observed(h: Harness) {
  const members: Record<string, unknown> = {};
  for (const id of ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']) {
    members[id] = (await h.api('GET', `/v1/members/${id}`)).body;
  }
  const follows = await h.ctx.db
    .selectFrom('member_follows')
    .select(['member_id', 'followed_id'])
    .orderBy('member_id')
    .orderBy('followed_id')
    .execute();
  const standings: Record<string, unknown> = {};
  for (const region of ['world', 'FR', 'DE']) {
    const page = await h.api('GET', `/v1/boards/reg/standings?region=${region}`);
    expect(page.status).toBe(200);
    standings[region] = page.body.entries.map((e: { rank: number; member: string; score: number }) => ({
      rank: e.rank,
      member: e.member,
      score: e.score,
    }));
  }
  return { members, follows, standings };
}

describe('PUT /v1/members', () => {
  let bulk: Harness;
  let single: Harness;
  beforeAll(async () => {
    [bulk, single] = await Promise.all([createHarness(), createHarness()]);
    await Promise.all([seed(bulk), seed(single)]);
  });
  afterAll(async () => {
    await Promise.all([bulk?.close(), single?.close()]);
  });

  it('has the effect of the single routes applied member by member, region moves included', async () => {
    const res = await bulk.api('PUT', '/v1/members', { members: BATCH });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ updated: new Set(BATCH.map((m) => m.id)).size });
    await applyOneByOne(single);

    const got = await observed(bulk);
    expect(got).toEqual(await observed(single));
    expect(got.standings).toEqual({
      world: expectedEntries(null),
      FR: expectedEntries('FR'),
      DE: expectedEntries('DE'),
    });
    expect(got.members.m1).toMatchObject({ displayName: 'Em One Again', region: 'DE' });
    expect(got.follows).toEqual([
      { member_id: 'm1', followed_id: 'm2' },
      { member_id: 'm1', followed_id: 'm3' },
      { member_id: 'm2', followed_id: 'm1' },
    ]);
  });

  it('validates the whole batch first: each problem names its index, and nothing is written', async () => {
    const tooMany = Array.from({ length: 1001 }, (_, i) => `f${i}`);
    const res = await bulk.api('PUT', '/v1/members', {
      members: [
        { id: 'fresh-1', displayName: 'Fine' },
        { id: 'bad id' },
        { id: 'fresh-2', region: 'world' },
        { id: 'fresh-3', following: tooMany },
        { id: 'fresh-4', nickname: 'x' },
        { id: 'm4', region: 'FR' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('validation_failed');
    const problems = res.body.details.map((d: { index: number; path: string }) => [d.index, d.path]);
    expect(problems).toEqual(
      expect.arrayContaining([
        [1, 'id'],
        [2, 'region'],
        [3, 'following'],
        [4, 'nickname'],
      ]),
    );
    expect(problems.map(([index]: [number]) => index)).not.toContain(0);
    expect(problems.map(([index]: [number]) => index)).not.toContain(5);
    expect((await bulk.api('GET', '/v1/members/fresh-1')).status).toBe(404);
    expect((await bulk.api('GET', '/v1/members/m4')).body.region).toBe('DE');

    for (const body of [{}, { members: [] }, { members: Array.from({ length: 1001 }, (_, i) => ({ id: `n${i}` })) }]) {
      const refused = await bulk.api('PUT', '/v1/members', body);
      expect(refused.status).toBe(400);
      expect(refused.body.details[0].path).toBe('members');
    }
  });

  it('takes a follow list of 1000 members, as the single route does', async () => {
    const thousand = Array.from({ length: 1000 }, (_, i) => `g${i}`);
    const res = await bulk.api('PUT', '/v1/members', { members: [{ id: 'many', following: thousand }] });
    expect(res.status).toBe(200);
    const stored = await bulk.ctx.db
      .selectFrom('member_follows')
      .select('followed_id')
      .where('member_id', '=', 'many')
      .execute();
    expect(stored.map((r) => r.followed_id).sort()).toEqual([...thousand].sort());
  });

  it('costs the same statements for 500 members as for 5: none per member', async () => {
    const statements: string[] = [];
    const database = new URL(bulk.env.DATABASE_URL).pathname.slice(1);
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
      const first = args[0] as string | { text?: string } | undefined;
      const text = typeof first === 'string' ? first : (first?.text ?? '');
      // Only this harness's database (the other shares the process), only the member tables.
      if (this.database === database && /\bmember(s|_follows|_aggregates)\b/.test(text)) statements.push(text);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    // Region moves queue delayed re-projections: no worker may run one while counting.
    await Promise.all(bulk.workers!.workers.map((w) => w.pause()));
    const batch = (n: number, tag: string) => ({
      members: Array.from({ length: n }, (_, i) => ({
        id: `${tag}${i}`,
        displayName: `${tag} ${i}`,
        region: i % 2 === 0 ? 'FR' : 'DE',
        following: [`${tag}${(i + 1) % n}`],
      })),
    });
    const cost = async (n: number, tag: string) => {
      statements.length = 0;
      expect((await bulk.api('PUT', '/v1/members', batch(n, tag))).status).toBe(200);
      // A second batch moves every member's region: the moves are set-based too.
      const moved = batch(n, tag).members.map((m) => ({ id: m.id, region: m.region === 'FR' ? 'DE' : 'FR' }));
      expect((await bulk.api('PUT', '/v1/members', { members: moved })).status).toBe(200);
      return statements.length;
    };
    try {
      const five = await cost(5, 'sa');
      const fiveHundred = await cost(500, 'sb');
      expect(fiveHundred).toBe(five);
      expect(five).toBeLessThanOrEqual(20);
    } finally {
      pg.Client.prototype.query = query;
      await Promise.all(bulk.workers!.workers.map((w) => w.resume()));
    }
    const stored = await bulk.ctx.db
      .selectFrom('members')
      .select(['id', 'region', 'display_name'])
      .where('id', 'in', ['sb0', 'sb1', 'sb499'])
      .orderBy('id')
      .execute();
    expect(stored).toEqual([
      { id: 'sb0', region: 'DE', display_name: 'sb 0' },
      { id: 'sb1', region: 'FR', display_name: 'sb 1' },
      { id: 'sb499', region: 'FR', display_name: 'sb 499' },
    ]);
  });

  it('moves no one whose region ends where it began', async () => {
    const versions = () =>
      bulk.ctx.db
        .selectFrom('member_aggregates')
        .select(['member_id', 'region', 'version'])
        .where('member_id', '=', 'm4')
        .execute();
    const before = await versions();
    expect(before.map((r) => r.region)).toEqual(['DE']);
    const res = await bulk.api('PUT', '/v1/members', {
      members: [
        { id: 'm4', region: 'FR' },
        { id: 'm4', region: 'DE' },
      ],
    });
    expect(res.status).toBe(200);
    expect(await versions()).toEqual(before);
  });

  it('writes nothing of a batch that fails part way through', async () => {
    const before = await observed(bulk);
    // The board's open period held by another transaction stops the batch at its region
    // moves, after its members were written; cancelling the batch's statement there fails it.
    const holder = new pg.Client({ connectionString: bulk.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM periods WHERE board_id = 'reg' FOR UPDATE`);
      const pending = bulk.api('PUT', '/v1/members', {
        members: [
          { id: 'm2', region: 'DE', displayName: 'Half', following: ['m6'] },
          { id: 'm4', region: 'FR' },
          { id: 'zz-new', displayName: 'New' },
        ],
      });
      let waiting: number | undefined;
      while (waiting === undefined) {
        const { rows } = await holder.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        waiting = rows[0]?.pid;
        if (waiting === undefined) await new Promise((r) => setTimeout(r, 20));
      }
      await holder.query('SELECT pg_cancel_backend($1)', [waiting]);
      const failed = await pending;
      expect(failed.status).toBe(503);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect(await observed(bulk)).toEqual(before);
  });
});
