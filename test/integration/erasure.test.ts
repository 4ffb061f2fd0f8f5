import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { keysOfPrefix, scanMatching } from '../../src/storage/redis/maintenance.js';
import { runTick } from '../../src/services/period-tick.js';
import { archiveLedger } from '../../src/services/ledger-archive.js';
import { prng, referenceStandings, type RefEvent } from '../support/reference.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { until } from '../support/poll.js';
import { testRedis } from '../support/databases.js';
import { migrateBefore, migrationsFrom, scratchDatabase } from '../support/migration-database.js';
import { eraseMember, memberHash } from '../../src/services/erasure-service.js';
import { InvalidInput } from '../../src/domain/errors.js';
import { migrateToLatest } from '../../src/storage/postgres/migrator.js';

/** Erasure: DELETE /v1/members/{id} leaves nothing of the member, and no other rank moves. */

let h: Harness;
/** Another web process's view: its own caches of names and follow lists, told by Redis pub/sub. */
let other: AppContext;
beforeAll(async () => {
  h = await createHarness({ concurrency: 2 });
  h.clock.set('2026-12-01T12:00:00Z');
  other = createContext(h.env, { log: createLogger('silent'), name: 'laurel-test-other' });
});
afterAll(async () => {
  await other.close();
  await h.close();
});

const tag = randomBytes(4).toString('hex');
const TARGET = `forget.me-${tag}`;
const NAME = `Zelda Forgettable ${tag}`;

/** Where the text occurs in Postgres: every text, jsonb and array column of every table. */
async function foundInPostgres(text: string): Promise<string[]> {
  const { rows: columns } = await sql<{ schema: string; table: string; column: string }>`
    SELECT c.table_schema AS schema, c.table_name AS table, c.column_name AS column
      FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
     WHERE c.table_schema IN ('public', 'ledger_archive') AND t.table_type = 'BASE TABLE'
       AND c.data_type IN ('text', 'jsonb', 'json', 'character varying', 'ARRAY')`.execute(h.ctx.db);
  expect(columns.length).toBeGreaterThan(40);
  const found: string[] = [];
  for (const c of columns) {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM ${sql.table(`${c.schema}.${c.table}`)} WHERE strpos(${sql.ref(c.column)}::text, ${text}) > 0`.execute(
      h.ctx.db,
    );
    if (rows[0]!.n > 0) found.push(`${c.table}.${c.column}`);
  }
  return found;
}

/** Where the text occurs in Redis: every key of the harness's prefix, by name and by value. */
async function foundInRedis(text: string): Promise<string[]> {
  const redis = testRedis();
  try {
    const keys = await scanMatching(redis, keysOfPrefix(h.env.REDIS_PREFIX));
    expect(keys.length).toBeGreaterThan(10);
    const found: string[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? [await redis.get(key)]
          : type === 'hash'
            ? Object.entries(await redis.hgetall(key)).flat()
            : type === 'set'
              ? await redis.smembers(key)
              : type === 'zset'
                ? await redis.zrange(key, '0', '-1')
                : type === 'list'
                  ? await redis.lrange(key, 0, -1)
                  : type === 'stream'
                    ? JSON.stringify(await redis.xrange(key, '-', '+'))
                    : [];
      if (key.includes(text) || JSON.stringify(value).includes(text))
        found.push(`${key} (${type}) ${JSON.stringify(value).slice(0, 3000)}`);
    }
    return found;
  } finally {
    redis.disconnect();
  }
}

describe('erasure', () => {
  it('removes the member from everything, keeps closed ranks under a pseudonym and their keys claimed', async () => {
    expect(
      (
        await h.api('PUT', '/v1/boards/er-open', {
          aggregation: 'sum',
          period: 'month',
          regions: true,
          categories: ['ranked'],
        })
      ).status,
    ).toBe(201);
    expect(
      (await h.api('PUT', '/v1/boards/er-day', { aggregation: 'best', period: 'day', graceSeconds: 0 })).status,
    ).toBe(201);
    const others = Array.from({ length: 30 }, (_, i) => `o${String(i).padStart(2, '0')}`);
    const region = (m: string) => (m === TARGET || Number(m.slice(1)) % 2 === 0 ? 'FR' : 'DE');
    for (const m of [TARGET, ...others]) {
      const body =
        m === TARGET ? { displayName: NAME, region: 'FR' } : { displayName: `Player ${m}`, region: region(m) };
      expect((await h.api('PUT', `/v1/members/${m}`, body)).status).toBe(200);
    }
    expect((await h.api('PUT', `/v1/members/${TARGET}/following`, { memberIds: ['o01', 'o02'] })).status).toBe(200);
    expect((await h.api('PUT', '/v1/members/o02/following', { memberIds: [TARGET] })).status).toBe(200);

    const rand = prng(5);
    const open: RefEvent[] = [];
    const day: RefEvent[] = [];
    const wire: Record<string, unknown>[] = [];
    for (const m of [TARGET, ...others]) {
      for (let k = 0; k < 3; k += 1) {
        const at = Date.parse('2026-12-01T10:00:00Z') + Math.floor(rand() * 3600) * 1000;
        const e: RefEvent = {
          key: `${m}-open-${k}`,
          member: m,
          units: Math.floor(rand() * 50),
          atMs: at,
          category: k === 0 ? 'ranked' : undefined,
        };
        open.push(e);
        wire.push({
          board: 'er-open',
          member: m,
          value: e.units,
          idempotencyKey: e.key,
          occurredAt: new Date(at).toISOString(),
          category: e.category,
          source: `src-${m}`,
          metadata: { who: m, name: m === TARGET ? NAME : null },
        });
      }
      // The target wins the day: awards and reports name them.
      const d: RefEvent = {
        key: `${m}-day`,
        member: m,
        units: m === TARGET ? 1000 : Math.floor(rand() * 100),
        atMs: Date.parse('2026-12-01T11:00:00Z'),
      };
      day.push(d);
      wire.push({
        board: 'er-day',
        member: m,
        value: d.units,
        idempotencyKey: d.key,
        occurredAt: new Date(d.atMs).toISOString(),
      });
    }
    expect((await h.api('POST', '/v1/events?wait=true', { events: wire })).status).toBe(200);
    // A conflict (kept as a rejection) and an exclusion with its history.
    const conflict = await h.api('POST', '/v1/events?wait=true', {
      board: 'er-open',
      member: TARGET,
      value: 7,
      idempotencyKey: `${TARGET}-open-0`,
    });
    expect(conflict.body.results[0].status).toBe('rejected');
    expect((await h.api('POST', `/v1/members/${TARGET}/exclusion`, { reason: `cheating by ${NAME}` })).status).toBe(
      200,
    );
    expect((await h.api('DELETE', `/v1/members/${TARGET}/exclusion`)).status).toBe(200);
    await h.drain();

    // Close the day: final results, awards, reports.
    h.clock.set('2026-12-02T00:05:00Z');
    expect((await runTick(h.ctx)).closed).toContain('er-day/2026-12-01');
    await h.drain();
    const closedBefore = await h.api('GET', '/v1/boards/er-day/periods/2026-12-01/results?limit=200');
    expect(closedBefore.body.entries[0].member).toBe(TARGET);
    expect((await h.api('GET', `/v1/members/${TARGET}/awards`)).body.awards.length).toBeGreaterThan(0);
    expect((await h.api('GET', `/v1/members/${TARGET}/notifications`)).body.notifications.length).toBe(1);
    expect(await foundInPostgres(TARGET)).not.toEqual([]);
    expect(await foundInRedis(TARGET)).not.toEqual([]);
    // Both processes hold the name, the member's follow list and one naming the member.
    await until('the other process caching', async () => other.members.caching || undefined);
    expect((await h.api('GET', '/v1/boards/er-open/standings/o02/following')).body.following).toBe(1);
    expect((await h.api('GET', `/v1/boards/er-open/standings/${TARGET}/following`)).body.following).toBe(2);
    expect(
      (await h.api('GET', '/v1/boards/er-open/standings?limit=200')).body.entries.map((e: any) => e.displayName),
    ).toContain(NAME);
    expect(Object.fromEntries(await other.members.displayNames([TARGET]))).toEqual({ [TARGET]: NAME });
    expect(await other.members.followedBy('o02')).toEqual([TARGET]);
    expect(await other.members.followedBy(TARGET)).toEqual(['o01', 'o02']);
    for (const ctx of [h.ctx, other]) expect(ctx.members.mentions(TARGET)).toBe(true);

    const erased = await h.api('DELETE', `/v1/members/${TARGET}`);
    expect(erased.status).toBe(202);
    const { erasureId } = erased.body;
    expect(erased.headers.get('location')).toBe(`/v1/admin/erasures/${erasureId}`);
    let status = await h.api('GET', `/v1/admin/erasures/${erasureId}`);
    for (let i = 0; i < 200 && status.body.state !== 'done'; i += 1) {
      await new Promise((r) => setTimeout(r, 100));
      status = await h.api('GET', `/v1/admin/erasures/${erasureId}`);
    }
    expect(status.body).toMatchObject({
      erasureId,
      state: 'done',
      requestedAt: '2026-12-02T00:05:00.000Z',
      finishedAt: '2026-12-02T00:05:00.000Z',
    });
    await h.drain();

    // Nothing left, in either store, of the id or the display name.
    expect(await foundInPostgres(TARGET)).toEqual([]);
    expect(await foundInPostgres(NAME)).toEqual([]);
    expect(await foundInRedis(TARGET)).toEqual([]);
    expect(await foundInRedis(NAME)).toEqual([]);
    expect((await h.api('GET', `/v1/members/${TARGET}`)).status).toBe(404);
    // Nor in the memory of either process (the other one as soon as the notice reaches it).
    expect(h.ctx.members.mentions(TARGET)).toBe(false);
    await until('the other process forgetting the member', async () => !other.members.mentions(TARGET) || undefined);
    expect(await other.members.followedBy('o02')).toEqual([]);

    // Open standings: everyone else, as the reference ranks them without the member.
    const rest = open.filter((e) => e.member !== TARGET);
    const spec = { aggregation: 'sum', order: 'desc', tieBreak: 'first' } as const;
    const checkOpen = async () => {
      for (const [query, expected] of [
        ['', referenceStandings(rest, spec)],
        ['&category=ranked', referenceStandings(rest, spec, 'ranked')],
        [
          '&region=FR',
          referenceStandings(
            rest.filter((e) => region(e.member) === 'FR'),
            spec,
          ),
        ],
      ] as const) {
        const page = await h.api('GET', `/v1/boards/er-open/standings?limit=200${query}`);
        expect(page.body.total).toBe(expected.length);
        expect(page.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
          expected.map((s) => [s.rank, s.member, s.units]),
        );
      }
    };
    await checkOpen();
    const following = await h.api('GET', '/v1/boards/er-open/standings/o02/following');
    expect(following.body.following).toBe(0);

    // Closed results: the same positions, the member under a pseudonym.
    const closedAfter = await h.api('GET', '/v1/boards/er-day/periods/2026-12-01/results?limit=200');
    const pseudonym = closedAfter.body.entries[0].member;
    expect(pseudonym).toMatch(/^erased:[0-9a-f]{12}$/);
    expect(closedAfter.body.entries).toEqual(
      closedBefore.body.entries.map((e: any) =>
        e.member === TARGET ? { ...e, member: pseudonym, displayName: null } : e,
      ),
    );
    const dayRef = referenceStandings(day, { aggregation: 'best', order: 'desc', tieBreak: 'first' });
    expect(closedAfter.body.entries.map((e: any) => e.rank)).toEqual(dayRef.map((s) => s.rank));

    // Nothing in Postgres leads from the id to the pseudonym: the record keeps no hash of the id
    // once done, and the member's keys, often guessable, are not kept under the pseudonym.
    const byUnkeyedHash = await sql`
      SELECT r.* FROM erasures e JOIN period_results r ON r.member_id = e.pseudonym
       WHERE e.member_hash = encode(sha256(convert_to(${TARGET}, 'UTF8')), 'hex')`.execute(h.ctx.db);
    expect(byUnkeyedHash.rows).toEqual([]);
    const record = await h.ctx.db
      .selectFrom('erasures')
      .selectAll()
      .where('id', '=', erasureId)
      .executeTakeFirstOrThrow();
    expect(record.member_hash).toBeNull();
    const byKey = await sql`
      SELECT r.* FROM score_event_keys k JOIN period_results r ON r.member_id = k.member_id
       WHERE k.idempotency_key = 'sha256:' || encode(sha256(convert_to(${`${TARGET}-day`}, 'UTF8')), 'hex')`.execute(
      h.ctx.db,
    );
    expect(byKey.rows).toEqual([]);
    expect(
      await h.ctx.db
        .selectFrom('score_event_keys')
        .select('board_id')
        .where(
          'idempotency_key',
          '=',
          sql<string>`'sha256:' || encode(sha256(convert_to(${`${TARGET}-day`}, 'UTF8')), 'hex')`,
        )
        .execute(),
    ).toEqual([{ board_id: 'er-day' }]);
    expect((await foundInPostgres(pseudonym)).sort()).toEqual(['erasures.pseudonym', 'period_results.member_id']);

    // A rebuild from Postgres gives the same standings.
    expect((await h.api('POST', '/v1/admin/rebuilds', { board: 'er-open', fromEvents: true })).status).toBe(202);
    await h.drain();
    await checkOpen();

    // A retry of an erased event is still a duplicate; a new event starts a new member.
    const retried = await h.api('POST', '/v1/events?wait=true', { events: [wire[1], wire[3]] });
    expect(retried.body.results).toMatchObject([
      { status: 'duplicate', board: 'er-open' },
      // Of a closed period: it names no one's placement, the pseudonym's neither.
      { status: 'duplicate', board: 'er-day', period: '2026-12-01', score: null, rank: null },
    ]);
    // A duplicate creates nothing: the member stays erased.
    expect((await h.api('GET', `/v1/members/${TARGET}`)).status).toBe(404);
    expect(await foundInPostgres(TARGET)).toEqual([]);
    const fresh = await h.api('POST', '/v1/events?wait=true', {
      board: 'er-open',
      member: TARGET,
      value: 3,
      idempotencyKey: `${TARGET}-new`,
    });
    expect(fresh.body.results[0]).toMatchObject({
      status: 'applied',
      score: 3,
      previousScore: null,
      previousRank: null,
    });
    expect((await h.api('GET', `/v1/members/${TARGET}`)).body).toMatchObject({
      member: TARGET,
      displayName: null,
      region: null,
    });
    expect((await h.api('GET', `/v1/members/${TARGET}/events`)).body.events.map((e: any) => e.idempotencyKey)).toEqual([
      `${TARGET}-new`,
    ]);

    expect((await h.api('GET', '/v1/admin/erasures/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await h.api('DELETE', '/v1/members/nobody-here')).status).toBe(404);
  });
});

describe('the erasure record', () => {
  let r: Harness;
  beforeAll(async () => {
    // No workers: the test runs the erasure job's service itself, at the moment it chooses.
    r = await createHarness({ workers: false });
  });
  afterAll(async () => {
    await r.close();
  });
  const unkeyed = (id: string) => createHash('sha256').update(id, 'utf8').digest('hex');
  const recordOf = (id: string) =>
    r.ctx.db.selectFrom('erasures').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('holds a keyed hash of the id while the erasure may run, and none once it is done', async () => {
    expect((await r.api('PUT', '/v1/members/rec-a', { displayName: 'A' })).status).toBe(200);
    const erased = await r.api('DELETE', '/v1/members/rec-a');
    expect(erased.status).toBe(202);
    const { erasureId } = erased.body;
    const queued = await recordOf(erasureId);
    expect(queued.state).toBe('queued');
    expect(queued.member_hash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(queued.member_hash).not.toContain(unkeyed('rec-a'));
    // Keyed by the environment, not by anything Postgres holds.
    expect(memberHash(r.env, 'rec-a')).toBe(queued.member_hash);
    expect(memberHash({ ...r.env, ERASURE_HASH_SECRET: 'another-secret-0123456789abcdef-0123' }, 'rec-a')).not.toBe(
      queued.member_hash,
    );
    expect(memberHash({ ...r.env, ADMIN_API_KEY: `${r.env.ADMIN_API_KEY}-rotated` }, 'rec-a')).not.toBe(
      queued.member_hash,
    );

    await expect(eraseMember(r.ctx, erasureId, 'rec-b')).rejects.toBeInstanceOf(InvalidInput);
    await eraseMember(r.ctx, erasureId, 'rec-a');
    const done = await recordOf(erasureId);
    expect(done).toMatchObject({ state: 'done', member_hash: null });
    // Run again (a job taken over after it finished): nothing to do, nothing refused.
    expect(await eraseMember(r.ctx, erasureId, 'rec-a')).toEqual({ periods: 0 });
    expect((await r.api('GET', '/v1/members/rec-a')).status).toBe(404);
  });

  it("checks a record of the previous release's form (unkeyed) until its erasure is done", async () => {
    expect((await r.api('PUT', '/v1/members/rec-c', { displayName: 'C' })).status).toBe(200);
    const erasureId = randomUUID();
    await sql`
      INSERT INTO erasures (id, member_hash, pseudonym, requested_at)
      VALUES (${erasureId}, ${unkeyed('rec-c')}, 'erased:00000000000c', now())`.execute(r.ctx.db);
    await expect(eraseMember(r.ctx, erasureId, 'rec-a')).rejects.toBeInstanceOf(InvalidInput);
    await eraseMember(r.ctx, erasureId, 'rec-c');
    expect(await recordOf(erasureId)).toMatchObject({ state: 'done', member_hash: null });
    expect((await r.api('GET', '/v1/members/rec-c')).status).toBe(404);
  });
});

describe('migration 0021: no erasure links an id to its pseudonym', () => {
  const UNLINKING = '2026-12-07-0021-unlinked-erasures';
  const database = scratchDatabase('unlink');
  const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

  it("drops finished erasures' unkeyed hashes, keeps running ones', and takes erased keys from the pseudonyms", async () => {
    const db = database();
    await migrateBefore(db, UNLINKING);

    const erasure = (state: string, member: string, pseudonym: string, postgresDone: boolean) => sql`
      INSERT INTO erasures (id, member_hash, pseudonym, state, requested_at, redis_periods)
      VALUES (gen_random_uuid(), ${sha(member)}, ${pseudonym}, ${state}, now(), ${postgresDone ? '[]' : null})`;
    await erasure('done', 'gone-1', 'erased:000000000001', true).execute(db);
    await erasure('failed', 'gone-2', 'erased:000000000002', true).execute(db);
    await erasure('running', 'gone-3', 'erased:000000000003', true).execute(db);
    await erasure('queued', 'gone-4', 'erased:000000000004', false).execute(db);
    const key = (k: string, member: string) => sql`
      INSERT INTO score_event_keys (idempotency_key, payload_hash, board_id, period_key, member_id, category, occurred_at)
      VALUES (${`sha256:${sha(k)}`}, 'h', 'b', 'all', ${member}, NULL, now())`;
    await key('match-1:gone-1', 'erased:000000000001').execute(db);
    await key('match-1:gone-3', 'erased:000000000003').execute(db);
    await key('match-1:alive', 'alive').execute(db);
    // A member who merely looks like a pseudonym keeps their keys.
    await key('match-1:lookalike', 'erased:00000000000f').execute(db);

    expect((await migrateToLatest(db)).migrations).toEqual(migrationsFrom(UNLINKING));
    const { rows: erasures } = await sql<{ state: string; member_hash: string | null }>`
      SELECT state, member_hash FROM erasures ORDER BY pseudonym`.execute(db);
    expect(erasures).toEqual([
      { state: 'done', member_hash: null },
      { state: 'failed', member_hash: null },
      { state: 'running', member_hash: sha('gone-3') },
      { state: 'queued', member_hash: sha('gone-4') },
    ]);
    const { rows: keys } = await sql<{ key: string; member: string }>`
      SELECT idempotency_key AS key, member_id AS member FROM score_event_keys ORDER BY member_id, idempotency_key`.execute(
      db,
    );
    expect(keys).toEqual(
      [
        { key: `sha256:${sha('match-1:gone-1')}`, member: '(erased)' },
        { key: `sha256:${sha('match-1:gone-3')}`, member: '(erased)' },
        { key: `sha256:${sha('match-1:alive')}`, member: 'alive' },
        { key: `sha256:${sha('match-1:lookalike')}`, member: 'erased:00000000000f' },
      ].sort((a, b) => (a.member + a.key < b.member + b.key ? -1 : 1)),
    );
  });
});

describe('erasure of a member whose events were archived', () => {
  let a: Harness;
  let outDir: string;
  beforeAll(async () => {
    a = await createHarness();
    outDir = await mkdtemp(path.join(tmpdir(), 'laurel-erase-archive-'));
  });
  afterAll(async () => {
    await a.close();
    await rm(outDir, { recursive: true, force: true });
  });

  it('leaves none of their events or keys in a detached month, nor in its file written afterwards', async () => {
    a.clock.set('2026-09-20T12:00:00Z');
    await runTick(a.ctx);
    expect(
      (await a.api('PUT', '/v1/boards/arch', { aggregation: 'sum', period: 'month', graceSeconds: 0 })).status,
    ).toBe(201);
    const at = (i: number) => new Date(Date.parse('2026-09-10T10:00:00Z') + i * 60_000).toISOString();
    const posted = [
      ...[0, 1, 2].map((i) => ({
        board: 'arch',
        member: 'archy',
        value: 5,
        idempotencyKey: `sep-archy-${i}`,
        occurredAt: at(i),
      })),
      ...[0, 1].map((i) => ({
        board: 'arch',
        member: 'stays',
        value: 3,
        idempotencyKey: `sep-stays-${i}`,
        occurredAt: at(10 + i),
      })),
    ];
    expect((await a.postEvents(posted)).map((r: { status: string }) => r.status)).toEqual(posted.map(() => 'applied'));
    a.clock.set('2026-10-05T00:00:00Z');
    await runTick(a.ctx);
    const archived = await archiveLedger(a.ctx, { before: '2026-10' });
    expect(archived.archived.map((m) => [m.month, m.events])).toContainEqual(['2026-09', 5]);

    const erased = await a.api('DELETE', '/v1/members/archy');
    expect(erased.status).toBe(202);
    await until('the erasure done', async () => {
      const status = await a.api('GET', `/v1/admin/erasures/${erased.body.erasureId}`);
      return status.body.state === 'done' || undefined;
    });

    const { rows: left } = await sql<{ member: string; n: number }>`
      SELECT member_id AS member, count(*)::int AS n FROM ledger_archive.score_events_p2026_09 GROUP BY 1 ORDER BY 1`.execute(
      a.ctx.db,
    );
    expect(left).toEqual([{ member: 'stays', n: 2 }]);
    const { rows: keys } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM score_event_keys WHERE member_id = 'archy'`.execute(a.ctx.db);
    expect(keys[0]!.n).toBe(0);
    const { rows: counts } = await sql<{ events: number }>`
      SELECT events::int FROM ledger_archived_periods WHERE board_id = 'arch' AND period_key = '2026-09'`.execute(
      a.ctx.db,
    );
    expect(counts).toEqual([{ events: 2 }]);

    // The archive file written after the erasure holds the other member's events only.
    const again = await archiveLedger(a.ctx, { before: '2026-10', outDir });
    const file = again.archived.find((m) => m.month === '2026-09')!.file!;
    const csv = gunzipSync(await readFile(file)).toString('utf8');
    expect(csv).not.toContain('archy');
    expect(
      csv
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',')[1])
        .sort(),
    ).toEqual(['sep-stays-0', 'sep-stays-1']);
    // Their keys stay claimed: a retry is a duplicate, and brings no member back.
    expect((await a.postEvents([posted[0]!])).map((r: { status: string }) => r.status)).toEqual(['duplicate']);
    expect((await a.api('GET', '/v1/members/archy')).status).toBe(404);
  });
});
