import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { testRedis } from '../support/databases.js';
import { keysOfPrefix, scanMatching } from '../../src/storage/redis/maintenance.js';
import { runTick } from '../../src/services/period-tick.js';
import { prng, referenceStandings, type RefEvent } from '../support/reference.js';
import { createContext, type AppContext } from '../../src/context.js';
import { createLogger } from '../../src/logger.js';
import { until } from '../support/poll.js';

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

    // A rebuild from Postgres gives the same standings.
    expect((await h.api('POST', '/v1/admin/rebuilds', { board: 'er-open', fromEvents: true })).status).toBe(202);
    await h.drain();
    await checkOpen();

    // A retry of an erased event is still a duplicate; a new event starts a new member.
    const retried = await h.api('POST', '/v1/events?wait=true', { events: [wire[1]] });
    expect(retried.body.results[0]).toMatchObject({ status: 'duplicate' });
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
