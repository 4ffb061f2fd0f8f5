import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, ADMIN_KEY, type Harness } from '../support/harness.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { openSse } from '../support/sse-client.js';
import {
  referenceCutoffs,
  referenceGoals,
  referenceNeeded,
  referenceStandings,
  wireEvent,
  type RefEvent,
  type RefGoal,
  type RefStanding,
} from '../support/reference.js';
import { referenceLeague } from '../support/league-reference.js';
import { runTick } from '../../src/services/period-tick.js';
import { waitUntilReady } from '../../src/storage/redis/connections.js';

/**
 * Every standings read × the period's state × the leaderboard Redis, against a reference
 * computed here. Whatever holds the scope (the cache, member aggregates, final results),
 * each read answers the same ranks; only `source` says which answered. A lost scope asks
 * for a rebuild in an open period only; an unreachable Redis asks for none.
 * The leaderboard Redis is a private server, stopped and started by this test.
 */

const HOUR = 3_600_000;
const PERIOD = '2026-12-05';
const BOARD = 'tbl';
const LADDER = 'tbl-ladder';
const BOARD_RULES = { aggregation: 'best', order: 'desc', tieBreak: 'shared' } as const;
const LEAGUE = { tiers: ['bronze', 'silver'], bucketSize: 4, promote: 1, relegate: 1, startTier: 'bronze' };
const REGIONS = ['FR', 'DE', 'ES'];
const FOLLOWER = 'm07';
const FOLLOWED = ['m00', 'm19', 'm04', 'ghost'];

type PeriodState = 'open' | 'closed' | 'retired';
type RedisState = 'ok' | 'scope missing' | 'down';

const members = Array.from({ length: 24 }, (_, i) => `m${String(i).padStart(2, '0')}`);
const regionOf = (member: string) => REGIONS[Number(member.slice(1)) % 3]!;
const at = (second: number) => Date.parse(`${PERIOD}T08:00:00Z`) + second * 1000;
// Few distinct values: shared ranks; some members in `duel` only, some in both.
const events: RefEvent[] = members.flatMap((m, i) => [
  { key: `a-${m}`, member: m, units: (i * 7) % 6, atMs: at(i), ...(i % 2 ? { category: 'duel' } : {}) },
  ...(i % 4 === 0 ? [{ key: `b-${m}`, member: m, units: (i * 5) % 7, atMs: at(40 + i), category: 'duel' }] : []),
]);
const ladderEvents: RefEvent[] = members
  .slice(0, 10)
  .flatMap((m, i) => [
    { key: `l-${m}`, member: m, units: (i % 4) + 1, atMs: at(i) },
    ...(i % 3 === 0 ? [{ key: `l2-${m}`, member: m, units: 2, atMs: at(30 + i) }] : []),
  ]);

/** The scopes read on the main board, each with its reference. */
const SCOPES = [
  { query: '', category: undefined, region: undefined },
  { query: '&category=duel', category: 'duel', region: undefined },
  { query: '&region=FR', category: undefined, region: 'FR' },
  { query: '&category=duel&region=DE', category: 'duel', region: 'DE' },
].map((s) => ({
  ...s,
  ranked: referenceStandings(
    events.filter((e) => s.region === undefined || regionOf(e.member) === s.region),
    BOARD_RULES,
    s.category,
  ),
}));
const LADDER_RULES = { aggregation: 'sum', order: 'desc', tieBreak: 'first' } as const;
const ladderRanked = referenceStandings(ladderEvents, LADDER_RULES);
const ladderBuckets = referenceLeague([ladderEvents], Infinity, Infinity, LEAGUE).buckets;

const rows = (entries: ReadonlyArray<{ rank: number; member: string; score: number }>) =>
  entries.map((e) => [e.rank, e.member, e.score]);
const refRows = (ranked: readonly RefStanding[]) => ranked.map((s) => [s.rank, s.member, s.units]);
const placing = (ranked: readonly RefStanding[], member: string) => {
  const found = ranked.find((s) => s.member === member);
  return { rank: found?.rank ?? null, score: found?.units ?? null };
};
const goalRow = ({ member, rank, units, needed, gap }: RefGoal) => ({ member, rank, score: units, needed, gap });
/** The award tiers of a scope, as the close grants them (the board's default awards). */
const tiersOf = (scope: { category?: string; region?: string }) => {
  if (scope.region === undefined) return [1, 10, 50, 100].map((n) => ({ award: `top${n}`, rank: n }));
  return scope.category === undefined ? [{ award: 'region_top50', rank: 50 }] : [];
};

/** The reference of the following route: the group's ranked members in scope order, ranked among themselves. */
function followingRows(ranked: readonly RefStanding[]): unknown[] {
  const group = new Set([FOLLOWER, ...FOLLOWED]);
  const mine = ranked.filter((s) => group.has(s.member));
  const out: Array<[number, string, number]> = [];
  mine.forEach((s, i) =>
    out.push([i > 0 && mine[i - 1]!.units === s.units ? out[i - 1]![0] : i + 1, s.member, s.units]),
  );
  return out;
}

let h: Harness;
let redis: PrivateRedis;
beforeAll(async () => {
  redis = await startPrivateRedis();
  h = await createHarness({ env: { LEADERBOARD_REDIS_URL: redis.url, LEADERBOARD_REDIS_CLUSTER: 'false' } });
  h.clock.set(`${PERIOD}T12:00:00Z`);
  expect(
    (
      await h.api('PUT', `/v1/boards/${BOARD}`, {
        ...BOARD_RULES,
        period: 'day',
        categories: ['duel'],
        regions: true,
        graceSeconds: 0,
      })
    ).status,
  ).toBe(201);
  expect(
    (await h.api('PUT', `/v1/boards/${LADDER}`, { aggregation: 'sum', period: 'day', league: LEAGUE, graceSeconds: 0 }))
      .status,
  ).toBe(201);
  for (const m of members)
    expect((await h.api('PUT', `/v1/members/${m}`, { region: regionOf(m) })).status).toBeLessThan(300);
  expect((await h.api('PUT', `/v1/members/${FOLLOWER}/following`, { memberIds: FOLLOWED })).status).toBeLessThan(300);
  await h.postEvents([...events.map((e) => wireEvent(BOARD, e)), ...ladderEvents.map((e) => wireEvent(LADDER, e))]);
  await h.drain();
});
afterAll(async () => {
  await h.close();
  await redis.stop();
});

async function get(path: string) {
  const res = await h.api('GET', path);
  expect(res.status, path).toBe(200);
  return res.body;
}

/** The first message of a stream, then the stream closed by the client (or ended by the server). */
async function firstMessage(path: string) {
  const client = await openSse(h.baseUrl + path, ADMIN_KEY);
  expect(client.status, path).toBe(200);
  try {
    return await client.next(10_000);
  } finally {
    client.close();
  }
}

/** Scope rebuilds waiting (the rebuild queue is paused while a scope is missing). */
async function waitingScopeRebuilds(): Promise<string[]> {
  const jobs = await h.ctx.rebuildQueue.getJobs(['waiting', 'prioritized', 'delayed']);
  return jobs
    .filter((j) => j.name === 'scope')
    .map((j) => {
      const data = j.data as { board: string; category: string };
      return `${data.board}/${data.category}`;
    })
    .sort();
}

/** Every standings read of the period, compared with the reference; `source` as the cell expects. */
async function readEverything(source: 'cache' | 'database'): Promise<void> {
  const p = `period=${PERIOD}`;
  for (const scope of SCOPES) {
    const { query, ranked } = scope;
    const where = `${BOARD}${query}`;
    const middle = ranked[Math.floor(ranked.length / 2)]!.member;
    const total = ranked.length;

    const page = await get(`/v1/boards/${BOARD}/standings?${p}&limit=200${query}`);
    expect([page.source, page.total, rows(page.entries)], `page ${where}`).toEqual([source, total, refRows(ranked)]);
    const offset = await get(`/v1/boards/${BOARD}/standings?${p}&limit=3&offset=2${query}`);
    expect([offset.source, offset.total, rows(offset.entries)], `page at offset ${where}`).toEqual([
      source,
      total,
      refRows(ranked.slice(2, 5)),
    ]);

    for (const member of [middle, 'nobody']) {
      const withMe = await get(`/v1/boards/${BOARD}/standings?${p}&limit=3&member=${member}${query}`);
      expect(
        [withMe.source, withMe.total, rows(withMe.entries), { rank: withMe.me.rank, score: withMe.me.score }],
        `?member=${member} ${where}`,
      ).toEqual([source, total, refRows(ranked.slice(0, 3)), placing(ranked, member)]);

      const standing = await get(`/v1/boards/${BOARD}/standings/${member}?${p}${query}`);
      expect(
        [standing.source, standing.total, standing.rank, standing.score],
        `standing of ${member} ${where}`,
      ).toEqual([source, total, placing(ranked, member).rank, placing(ranked, member).score]);

      const around = await get(`/v1/boards/${BOARD}/standings/${member}/around?${p}&radius=2${query}`);
      const position = ranked.findIndex((s) => s.member === member);
      const near = position < 0 ? [] : ranked.slice(Math.max(0, position - 2), position + 3);
      expect([around.source, around.total, around.rank, rows(around.entries)], `around ${member} ${where}`).toEqual([
        source,
        total,
        placing(ranked, member).rank,
        refRows(near),
      ]);
    }

    const asked = [ranked[0]!.member, middle, ranked[ranked.length - 1]!.member, 'ghost'];
    const picked = ranked.filter((s) => asked.includes(s.member));
    const some = await get(`/v1/boards/${BOARD}/standings?${p}&members=${asked.join(',')}${query}`);
    expect([some.source, some.total, rows(some.entries), some.me], `?members= ${where}`).toEqual([
      source,
      total,
      refRows(picked),
      undefined,
    ]);
    const someAndMe = await get(
      `/v1/boards/${BOARD}/standings?${p}&members=${asked.join(',')}&member=${FOLLOWER}${query}`,
    );
    expect(
      [someAndMe.source, rows(someAndMe.entries), { rank: someAndMe.me.rank, score: someAndMe.me.score }],
      `?members= with ?member= ${where}`,
    ).toEqual([source, refRows(picked), placing(ranked, FOLLOWER)]);

    for (const member of [middle, FOLLOWER, ranked[0]!.member, 'nobody']) {
      const goals = await get(`/v1/boards/${BOARD}/standings/${member}/goals?${p}${query}`);
      const expected = referenceGoals(ranked, BOARD_RULES, member, member === FOLLOWER ? FOLLOWED : [], tiersOf(scope));
      expect(
        [goals.source, goals.rank, goals.score, goals.next, goals.following, goals.awards, goals.league],
        `goals of ${member} ${where}`,
      ).toEqual([
        source,
        expected.rank,
        expected.units,
        expected.next && goalRow(expected.next),
        expected.following.map(goalRow),
        expected.awards.map(({ award, ...g }) => {
          const { member: _member, ...row } = goalRow(g);
          return { award, ...row };
        }),
        null,
      ]);
    }
    const cutoffs = await get(`/v1/boards/${BOARD}/cutoffs?${p}&ranks=1,3,30&percents=10,50,100${query}`);
    const expectedCutoffs = referenceCutoffs(ranked, [1, 3, 30], [100_000, 500_000, 1_000_000]);
    expect([cutoffs.source, cutoffs.total, cutoffs.ranks, cutoffs.percents], `cutoffs ${where}`).toEqual([
      source,
      total,
      expectedCutoffs.ranks.map((r) => ({ rank: r.rank, score: r.units })),
      expectedCutoffs.percents.map((c) => ({ percent: c.percent, rank: c.rank, score: c.units })),
    ]);

    const following = await get(`/v1/boards/${BOARD}/standings/${FOLLOWER}/following?${p}${query}`);
    const expectedFollowing = followingRows(ranked);
    expect([following.source, following.total, rows(following.entries)], `following ${where}`).toEqual([
      source,
      expectedFollowing.length,
      expectedFollowing,
    ]);

    const top = await firstMessage(`/v1/boards/${BOARD}/standings/stream?${p}&limit=5${query}`);
    expect([top.event, top.data.source, top.data.total, rows(top.data.entries)], `top stream ${where}`).toEqual([
      'top',
      source,
      total,
      refRows(ranked.slice(0, 5)),
    ]);
    const mine = await firstMessage(`/v1/boards/${BOARD}/standings/${middle}/stream?${p}${query}`);
    expect(
      [mine.event, mine.data.source, mine.data.total, mine.data.rank, mine.data.score],
      `member stream ${where}`,
    ).toEqual(['standing', source, total, placing(ranked, middle).rank, placing(ranked, middle).score]);
  }

  const world = SCOPES[0]!.ranked;
  for (const member of [FOLLOWER, 'm01', 'nobody']) {
    const across = await get(`/v1/members/${member}/standings?${p}`);
    const byBoard = Object.fromEntries(
      across.standings.map((s: any) => [s.board, [s.source, s.total, s.rank, s.score]]),
    );
    expect(byBoard, `${member} across boards`).toEqual({
      [BOARD]: [source, world.length, placing(world, member).rank, placing(world, member).score],
      [LADDER]: [source, ladderRanked.length, placing(ladderRanked, member).rank, placing(ladderRanked, member).score],
    });
  }

  expect(ladderBuckets.size).toBeGreaterThan(1);
  for (const [bucket, standings] of ladderBuckets) {
    const body = await get(`/v1/boards/${LADDER}/league/${bucket}?${p}`);
    expect([body.total, rows(body.entries)], `league bucket ${bucket}`).toEqual([standings.length, refRows(standings)]);
    // Goals: the lowest promoting place of the bucket, for those not in it.
    const lowest = standings[LEAGUE.promote - 1]!;
    for (const [place, mine] of standings.entries()) {
      const goals = await get(`/v1/boards/${LADDER}/standings/${mine.member}/goals?${p}`);
      const world = ladderRanked.find((s) => s.member === mine.member)!;
      const needed = referenceNeeded(LADDER_RULES, mine.member, world, lowest);
      expect([goals.source, goals.league], `league goal of ${mine.member}`).toEqual([
        source,
        place < LEAGUE.promote
          ? null
          : { zone: 'promote', rank: lowest.rank, score: lowest.units, needed, gap: Math.abs(needed - world.units) },
      ]);
    }
  }
}

/** Makes the cell's Redis state; returns what undoes it. */
async function enter(redisState: RedisState): Promise<() => Promise<void>> {
  if (redisState === 'ok') return async () => undefined;
  if (redisState === 'scope missing') {
    await h.ctx.rebuildQueue.pause();
    for (const board of [BOARD, LADDER]) await h.ctx.leaderboard.redis.del(h.ctx.leaderboard.keys.ok(board, PERIOD));
    return async () => {
      await h.ctx.rebuildQueue.resume();
      await h.drain();
    };
  }
  await redis.crash();
  return async () => {
    await redis.start();
    await waitUntilReady(h.ctx.leaderboard.redis);
  };
}

const PERIOD_STATES: PeriodState[] = ['open', 'closed', 'retired'];
const REDIS_STATES: RedisState[] = ['ok', 'scope missing', 'down'];

/** Brings the period to `state`, its Redis copy complete while it is kept there. */
async function reach(state: PeriodState): Promise<void> {
  if (state === 'open') return;
  if (state === 'closed') {
    // The open period's cells left Redis empty (a volatile server restarted): an admin rebuild refills it before the close.
    expect((await h.api('POST', '/v1/admin/rebuilds', {})).status).toBe(202);
    await h.drain();
    h.clock.set(`2026-12-06T00:00:00Z`);
    expect((await runTick(h.ctx)).closed.sort()).toEqual([`${BOARD}/${PERIOD}`, `${LADDER}/${PERIOD}`].sort());
    return;
  }
  h.clock.set(new Date(Date.parse('2026-12-06T00:00:00Z') + 168 * HOUR));
  await runTick(h.ctx);
}

describe('every standings read, by period state and leaderboard Redis state, answers the reference', () => {
  for (const periodState of PERIOD_STATES) {
    describe(`a period ${periodState}`, () => {
      beforeAll(() => reach(periodState));
      for (const redisState of REDIS_STATES) {
        it(`with the leaderboard Redis ${redisState}`, async () => {
          const fromCache = periodState !== 'retired' && redisState === 'ok';
          const leave = await enter(redisState);
          try {
            await readEverything(fromCache ? 'cache' : 'database');
            // A lost scope is rebuilt in an open period only; an unreachable Redis asks for nothing.
            const rebuilds =
              periodState === 'open' && redisState === 'scope missing'
                ? [`${BOARD}/all`, `${BOARD}/duel`, `${LADDER}/all`].sort()
                : [];
            expect(await waitingScopeRebuilds()).toEqual(rebuilds);
          } finally {
            await leave();
          }
        });
      }
    });
  }
});
