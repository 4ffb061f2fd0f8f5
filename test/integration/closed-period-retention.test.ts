import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, ADMIN_KEY, type Harness } from '../support/harness.js';
import { openSse, type SseMessage } from '../support/sse-client.js';
import { referenceStandings, type RefEvent, wireEvent } from '../support/reference.js';
import { runTick } from '../../src/services/period-tick.js';
import { processScopeRebuild } from '../../src/services/scope-rebuild.js';
import { scanMatching } from '../../src/storage/redis/maintenance.js';
import { verifyLeaderboards } from '../../src/services/verify-service.js';
import { EVICTIONS_PER_TICK } from '../../src/services/closed-period-retention.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const HOUR = 3_600_000;
const BOARD = 'kept';
const OTHER = 'kept-first';
const PERIOD = '2026-11';

async function periodKeys(board: string, period: string): Promise<string[]> {
  return scanMatching(h.ctx.leaderboard.redis, [`${h.ctx.leaderboard.keys.period(board, period)}:*`]);
}

/** Every standings route of the closed period, by name; `source` is left out (cache before, database after). */
async function readEverything(): Promise<Record<string, unknown>> {
  const paths: Record<string, string> = {};
  const scopes = ['', '&category=duel', '&region=FR', '&region=DE', '&category=duel&region=DE', '&region=ZZ'];
  for (const [i, q] of scopes.entries()) {
    paths[`page${i}`] = `/v1/boards/${BOARD}/standings?period=${PERIOD}&limit=200${q}`;
    paths[`page${i}-offset`] = `/v1/boards/${BOARD}/standings?period=${PERIOD}&limit=7&offset=5${q}`;
    paths[`page${i}-past-end`] = `/v1/boards/${BOARD}/standings?period=${PERIOD}&limit=5&offset=500${q}`;
    paths[`results${i}`] = `/v1/boards/${BOARD}/periods/${PERIOD}/results?limit=200${q}`;
  }
  for (const m of ['m00', 'm07', 'm19', 'm29', 'nobody']) {
    paths[`member-${m}`] = `/v1/boards/${BOARD}/standings/${m}?period=${PERIOD}`;
    paths[`member-${m}-duel`] = `/v1/boards/${BOARD}/standings/${m}?period=${PERIOD}&category=duel`;
    paths[`member-${m}-FR`] = `/v1/boards/${BOARD}/standings/${m}?period=${PERIOD}&region=FR`;
    paths[`around-${m}`] = `/v1/boards/${BOARD}/standings/${m}/around?period=${PERIOD}&radius=3`;
    paths[`around-${m}-DE`] = `/v1/boards/${BOARD}/standings/${m}/around?period=${PERIOD}&radius=2&region=DE`;
    paths[`following-${m}`] = `/v1/boards/${BOARD}/standings/${m}/following?period=${PERIOD}`;
    paths[`following-${m}-duel`] =
      `/v1/boards/${BOARD}/standings/${m}/following?period=${PERIOD}&category=duel&limit=2`;
    paths[`boards-${m}`] = `/v1/members/${m}/standings?period=${PERIOD}`;
  }
  const out: Record<string, unknown> = {};
  for (const [name, path] of Object.entries(paths)) {
    const res = await h.api('GET', path);
    expect(res.status, path).toBe(200);
    out[name] = withoutSource(res.body);
  }
  return out;
}

function withoutSource(body: any): unknown {
  if (Array.isArray(body)) return body.map(withoutSource);
  if (body && typeof body === 'object') {
    return Object.fromEntries(
      Object.entries(body)
        .filter(([k]) => k !== 'source')
        .map(([k, v]) => [k, withoutSource(v)]),
    );
  }
  return body;
}

/** Every message a stream sends until the server ends it (a closed period's stream ends after `closed`). */
async function streamToEnd(path: string): Promise<SseMessage[]> {
  const client = await openSse(h.baseUrl + path, ADMIN_KEY);
  expect(client.status, path).toBe(200);
  await client.ended;
  return client.messages.map((m) => ({ event: m.event, data: withoutSource(m.data) }));
}

async function sources(): Promise<string[]> {
  const res = await Promise.all([
    h.api('GET', `/v1/boards/${BOARD}/standings?period=${PERIOD}`),
    h.api('GET', `/v1/boards/${BOARD}/standings/m07?period=${PERIOD}`),
    h.api('GET', `/v1/boards/${BOARD}/standings/m07/around?period=${PERIOD}`),
    h.api('GET', `/v1/boards/${BOARD}/standings/m07/following?period=${PERIOD}`),
  ]);
  const across = await h.api('GET', `/v1/members/m07/standings?period=${PERIOD}`);
  return [...res.map((r) => r.body.source), ...across.body.standings.map((s: any) => s.source)];
}

describe('closed-period retention', () => {
  const regions = ['FR', 'DE', 'ES'];
  const events: RefEvent[] = [];

  it('serves a closed period from Redis until CLOSED_PERIOD_CACHE_HOURS (an exclusion after the close changing nothing), then removes its keys and answers every route identically from the final results', async () => {
    h.clock.set('2026-11-20T12:00:00Z');
    await h.api('PUT', `/v1/boards/${BOARD}`, {
      aggregation: 'best',
      tieBreak: 'shared',
      categories: ['duel'],
      regions: true,
      graceSeconds: 0,
    });
    await h.api('PUT', `/v1/boards/${OTHER}`, { aggregation: 'sum', tieBreak: 'first', graceSeconds: 0 });
    for (let i = 0; i < 30; i += 1) {
      const m = `m${String(i).padStart(2, '0')}`;
      await h.api('PUT', `/v1/members/${m}`, { region: regions[i % 3], displayName: `Player ${i}` });
      // Few distinct values: plenty of shared ranks.
      events.push({
        key: `k-${m}`,
        member: m,
        units: (i * 7) % 5,
        atMs: Date.parse('2026-11-20T10:00:00Z') + i * 1000,
        ...(i % 2 ? { category: 'duel' } : {}),
      });
    }
    const res = await h.api('POST', '/v1/events?wait=true', {
      events: [
        ...events.map((e) => wireEvent(BOARD, e)),
        ...events.slice(0, 12).map((e) => ({
          board: OTHER,
          member: e.member,
          value: e.units + 1,
          idempotencyKey: `o-${e.key}`,
          occurredAt: new Date(e.atMs).toISOString(),
        })),
      ],
    });
    expect(res.status).toBe(200);
    await h.api('PUT', '/v1/members/m07/following', { memberIds: ['m00', 'm19', 'm29', 'ghost'] });
    await h.api('PUT', '/v1/members/m19/following', { memberIds: ['m07'] });

    h.clock.set('2026-12-01T00:00:00Z');
    const tick = await runTick(h.ctx);
    expect(tick.closed.sort()).toEqual([`${OTHER}/${PERIOD}`, `${BOARD}/${PERIOD}`]);
    expect(await sources()).toEqual(['cache', 'cache', 'cache', 'cache', 'cache', 'cache']);
    const before = await readEverything();
    // The cached answers of the closed period are its stored final results, scope by scope.
    for (let i = 0; i < 6; i += 1)
      expect((before[`page${i}`] as any).entries).toEqual((before[`results${i}`] as any).entries);
    expect((before.page0 as any).entries.map((e: any) => e.member)).toContain('m19');

    // An exclusion after the close re-projects open periods only: a closed period's standings
    // are final, so it answers the same now (from Redis) and after its retirement (below).
    expect((await h.api('POST', '/v1/members/m19/exclusion', { reason: 'after the close' })).status).toBe(200);
    await h.drain();
    expect(await readEverything()).toEqual(before);

    // The world ranking matches an independent model of the rules.
    const expected = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'shared' });
    expect((before.page0 as any).entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
      expected.map((e) => [e.rank, e.member, e.units]),
    );

    // One hour short of the retention: still cached, keys kept.
    h.clock.set(new Date(Date.parse('2026-12-01T00:00:00Z') + 167 * HOUR));
    expect((await runTick(h.ctx)).evicted).toEqual([]);
    expect((await periodKeys(BOARD, PERIOD)).length).toBeGreaterThan(0);
    expect(await sources()).toEqual(['cache', 'cache', 'cache', 'cache', 'cache', 'cache']);

    h.clock.set(new Date(Date.parse('2026-12-01T00:00:00Z') + 168 * HOUR));
    const currentKeys = await periodKeys(BOARD, '2026-12');
    expect(currentKeys.length).toBeGreaterThan(0);
    expect((await runTick(h.ctx)).evicted.sort()).toEqual([`${OTHER}/${PERIOD}`, `${BOARD}/${PERIOD}`]);
    expect(await periodKeys(BOARD, PERIOD)).toEqual([]);
    expect(await periodKeys(OTHER, PERIOD)).toEqual([]);
    // The open period of the same board keeps its keys.
    expect((await periodKeys(BOARD, '2026-12')).sort()).toEqual(currentKeys.sort());
    // A second tick has nothing left to do.
    expect((await runTick(h.ctx)).evicted).toEqual([]);

    expect(await readEverything()).toEqual(before);
    expect(await sources()).toEqual(['database', 'database', 'database', 'database', 'database', 'database']);
    // Reads of the retired period asked for no rebuild and brought no key back.
    await h.drain();
    expect(await periodKeys(BOARD, PERIOD)).toEqual([]);
    // (Member re-projections of the profile updates above are the only rebuild-queue jobs.)
    const jobs = await h.ctx.rebuildQueue.getJobs([
      'completed',
      'failed',
      'waiting',
      'active',
      'prioritized',
      'delayed',
    ]);
    expect(jobs.filter((j) => j.name !== 'member')).toEqual([]);
  });

  it('an exclusion after the retirement projects nothing into the removed period', async () => {
    expect((await h.api('POST', '/v1/members/m03/exclusion', { reason: 'test' })).status).toBe(200);
    await h.drain();
    expect(await periodKeys(BOARD, PERIOD)).toEqual([]);
    expect((await h.api('DELETE', '/v1/members/m03/exclusion')).status).toBe(200);
    await h.drain();
    expect(await periodKeys(BOARD, PERIOD)).toEqual([]);
  });

  it('an admin rebuild of a retired period is refused with 409; verify checks it holds no keys', async () => {
    const refused = await h.api('POST', '/v1/admin/rebuilds', { board: BOARD, period: PERIOD });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'conflict', details: [{ path: 'period' }] });
    expect(await verifyLeaderboards(h.ctx, { board: BOARD, period: PERIOD })).toEqual({
      scopes: 0,
      differences: [],
      missing: [],
    });
    // A key brought back by anything is reported.
    await h.ctx.leaderboard.redis.zadd(h.ctx.leaderboard.keys.scope(BOARD, PERIOD, 'all'), 1, 'stray');
    const found = await verifyLeaderboards(h.ctx, { board: BOARD, period: PERIOD });
    expect(found.differences.map((d) => d.problem)).toEqual(['retired closed period still holds 1 Redis key(s)']);
    await h.ctx.leaderboard.redis.unlink(h.ctx.leaderboard.keys.scope(BOARD, PERIOD, 'all'));
  });

  it('removes a backlog of periods a bounded number per tick, and scopes beyond one step each', async () => {
    await h.api('PUT', '/v1/boards/daily', {
      aggregation: 'sum',
      period: 'day',
      regions: true,
      categories: ['a', 'b'],
    });
    const redis = h.ctx.leaderboard.redis;
    const keys = h.ctx.leaderboard.keys;
    const days = Array.from({ length: EVICTIONS_PER_TICK + 10 }, (_, i) =>
      new Date(Date.parse('2026-01-01T00:00:00Z') + i * 24 * HOUR).toISOString().slice(0, 10),
    );
    await h.ctx.db
      .insertInto('periods')
      .values(
        days.map((d) => ({
          board_id: 'daily',
          key: d,
          starts_at: new Date(`${d}T00:00:00Z`),
          ends_at: new Date(Date.parse(`${d}T00:00:00Z`) + 24 * HOUR),
          state: 'closed' as const,
          closed_at: new Date(`${d}T01:00:00Z`),
        })),
      )
      .execute();
    // The first day has more region scopes than one step removes.
    const manyRegions = Array.from({ length: 1234 }, (_, i) => `R${i}`);
    for (const [i, day] of days.entries()) {
      const pipe = redis.pipeline();
      for (const category of ['all', 'a', 'b']) {
        const regions = i === 0 ? manyRegions : ['FR'];
        pipe.sadd(`${keys.period('daily', day)}:rg:${category}`, ...regions);
        for (const r of regions) pipe.zadd(keys.scope('daily', day, category, r), 1, 'x');
        pipe.zadd(keys.scope('daily', day, category), 1, 'x');
        // The member state: its index and two buckets.
        pipe.zadd(keys.state('daily', day, category), 0, '', 0, 'y');
        pipe.hset(`${keys.state('daily', day, category)}:`, 'x', '1|FR|');
        pipe.hset(`${keys.state('daily', day, category)}:y`, 'y', '1|FR|');
      }
      pipe.hset(keys.ok('daily', day), 'all', '1');
      await pipe.exec();
    }
    expect((await periodKeys('daily', days[0]!)).length).toBe(3 * (1234 + 5) + 1);
    const first = await runTick(h.ctx);
    expect(first.evicted).toEqual(days.slice(0, EVICTIONS_PER_TICK).map((d) => `daily/${d}`));
    expect((await periodKeys('daily', days[EVICTIONS_PER_TICK]!)).length).toBe(3 * 6 + 1);
    expect((await runTick(h.ctx)).evicted).toEqual(days.slice(EVICTIONS_PER_TICK).map((d) => `daily/${d}`));
    expect(await scanMatching(redis, [`${h.ctx.env.REDIS_PREFIX}:lb:{daily|2026-0[123]-*`])).toEqual([]);
  });

  it('removes the keys of every category the period had, one since removed from the board too; its streams end with the same final state', async () => {
    const board = 'shrunk';
    const period = '2027-01';
    h.clock.set('2027-01-10T12:00:00Z');
    await h.api('PUT', `/v1/boards/${board}`, {
      aggregation: 'sum',
      tieBreak: 'first',
      categories: ['duel', 'solo'],
      regions: true,
      graceSeconds: 0,
    });
    await h.api('PUT', '/v1/members/c1', { region: 'FR' });
    await h.api('PUT', '/v1/members/c2', { region: 'DE' });
    const at = '2027-01-10T11:00:00Z';
    const posted = await h.api('POST', '/v1/events?wait=true', {
      events: [
        { board, member: 'c1', value: 5, category: 'duel', idempotencyKey: 's-1', occurredAt: at },
        { board, member: 'c2', value: 3, category: 'duel', idempotencyKey: 's-2', occurredAt: at },
        { board, member: 'c2', value: 4, category: 'solo', idempotencyKey: 's-3', occurredAt: at },
      ],
    });
    expect(posted.status).toBe(200);
    // "duel" leaves the board; its keys of this period stay in Redis until the period goes.
    expect(
      (
        await h.api('PUT', `/v1/boards/${board}`, {
          aggregation: 'sum',
          tieBreak: 'first',
          categories: ['solo'],
          regions: true,
          graceSeconds: 0,
        })
      ).status,
    ).toBe(200);
    const keys = h.ctx.leaderboard.keys;
    const held = await periodKeys(board, period);
    expect(held).toContain(keys.scope(board, period, 'duel'));
    expect(held).toContain(keys.scope(board, period, 'duel', 'FR'));
    expect(held).toContain(keys.state(board, period, 'duel'));

    h.clock.set('2027-02-01T00:00:00Z');
    expect((await runTick(h.ctx)).closed).toContain(`${board}/${period}`);
    const streams = [
      `/v1/boards/${board}/standings/c2/stream?period=${period}`,
      `/v1/boards/${board}/standings/c2/stream?period=${period}&category=solo&region=DE`,
      `/v1/boards/${board}/standings/stream?period=${period}`,
      `/v1/boards/${board}/standings/stream?period=${period}&region=FR`,
    ];
    const before = [];
    for (const path of streams) before.push(await streamToEnd(path));
    // What a closed period streams: its final state, then `closed`.
    expect(before[0]!.map((m) => m.event)).toEqual(['standing', 'closed']);
    expect(before[0]![0]!.data).toMatchObject({
      member: 'c2',
      rank: 1,
      score: 7,
      period: { key: period, state: 'closed' },
    });
    expect(before[2]!.map((m) => m.event)).toEqual(['top', 'closed']);
    expect(before[2]![0]!.data.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual([
      [1, 'c2', 7],
      [2, 'c1', 5],
    ]);

    h.clock.set(new Date(Date.parse('2027-02-01T00:00:00Z') + 168 * HOUR));
    expect((await runTick(h.ctx)).evicted).toContain(`${board}/${period}`);
    expect(await periodKeys(board, period)).toEqual([]);
    const after = [];
    for (const path of streams) after.push(await streamToEnd(path));
    expect(after).toEqual(before);
  });

  it('a scope rebuild that checked the period before its retirement puts no key back after the eviction', async () => {
    const board = 'rebuilt';
    const period = '2027-03';
    h.clock.set('2027-03-10T12:00:00Z');
    await h.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', tieBreak: 'first', graceSeconds: 0 });
    const posted = await h.api('POST', '/v1/events?wait=true', {
      events: [
        { board, member: 'c1', value: 2, idempotencyKey: 'r-1' },
        { board, member: 'c2', value: 9, idempotencyKey: 'r-2' },
      ],
    });
    expect(posted.status).toBe(200);
    const closedAt = Date.parse('2027-04-01T00:00:00Z');
    h.clock.set(new Date(closedAt));
    expect((await runTick(h.ctx)).closed).toContain(`${board}/${period}`);
    const retiresAt = closedAt + 168 * HOUR;
    h.clock.set(new Date(retiresAt));
    expect((await runTick(h.ctx)).evicted).toContain(`${board}/${period}`);
    expect(await periodKeys(board, period)).toEqual([]);

    // An operator's rebuild (an automatic one skips a closed period at once): its start-up
    // check one second before the retirement (the clock set back stands for that moment),
    // its registration and pages after the eviction.
    h.clock.set(new Date(retiresAt - 1000));
    let pages = 0;
    const result = await processScopeRebuild(h.ctx, { board, period, category: 'all', trigger: 'api' }, async () => {
      pages += 1;
      h.clock.set(new Date(retiresAt));
    });
    expect(pages).toBe(1);
    expect(result).toEqual({ skipped: 'retired' });
    // Nothing live is back; only the abandoned rebuild's temp keys remain, and they expire.
    const left = await periodKeys(board, period);
    expect(left.filter((k) => !k.includes(':t:'))).toEqual([]);
    for (const key of left) expect(await h.ctx.leaderboard.redis.ttl(key)).toBeGreaterThan(0);
    const read = await h.api('GET', `/v1/boards/${board}/standings?period=${period}`);
    expect(read.body).toMatchObject({
      source: 'database',
      total: 2,
      entries: [
        { rank: 1, member: 'c2', score: 9 },
        { rank: 2, member: 'c1', score: 2 },
      ],
    });
  });
});
