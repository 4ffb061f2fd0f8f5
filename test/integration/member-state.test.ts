import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.js';
import { prng, shuffle } from '../support/reference.js';
import type { Board } from '../../src/domain/board.js';
import type { AggregateState } from '../../src/storage/postgres/events-repository.js';
import { ScopeRebuildWriter } from '../../src/storage/redis/scope-rebuild.js';
import { unlinkPeriodKeys } from '../../src/storage/redis/period-eviction.js';
import { stateBuckets } from '../../src/storage/redis/member-state.js';
import { scanMatching } from '../../src/storage/redis/maintenance.js';
import { rebuildIfLeaderboardLost } from '../../src/services/rebuild-service.js';
import { releaseInstanceMarkers } from '../../src/storage/redis/instance-markers.js';

// The member state of a category is cut into listpack-sized buckets of consecutive member ids
// (lua/lib/member-state.lua). These tests drive the scripts with aggregates made here and
// compare every member's place with a ranking computed here, while the buckets grow, split,
// are rebuilt (with live writes waiting and replayed), swapped and evicted.

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const BUCKET_MAX = 128;
const PERIOD = 'all';

interface Agg {
  value: number;
  reachedSec: number;
  version: number;
  region: string | null;
  hidden: boolean;
}

async function boardOf(id: string, body: object = {}): Promise<Board> {
  expect(
    (await h.api('PUT', `/v1/boards/${id}`, { aggregation: 'best', tieBreak: 'first', period: 'all', ...body })).status,
  ).toBeLessThan(300);
  return (await h.ctx.boards.getMany([id], { fresh: true })).get(id)!;
}

const toState = (board: string, member: string, a: Agg): AggregateState => ({
  board,
  period: PERIOD,
  category: 'all',
  member,
  ...a,
  value: String(a.value),
});

/** Redis' own order for `best`, `desc`, tie `first`: value, then the earlier second, then the member id. */
function referenceRanks(aggs: ReadonlyMap<string, Agg>, region?: string): Map<string, number> {
  const ranked = [...aggs.entries()]
    .filter(([, a]) => !a.hidden && (region === undefined || a.region === region))
    .sort(([ma, a], [mb, b]) => b.value - a.value || a.reachedSec - b.reachedSec || (ma < mb ? -1 : ma > mb ? 1 : 0));
  return new Map(ranked.map(([m], i) => [m, i + 1]));
}

async function expectPlaces(board: Board, aggs: ReadonlyMap<string, Agg>, region?: string) {
  const expected = referenceRanks(aggs, region);
  const members = [...aggs.keys()];
  const scope = { board, period: PERIOD, category: 'all', region: region ?? 'world' };
  const places = await h.ctx.leaderboard.placeMany(members.map((member) => ({ ...scope, member })));
  members.forEach((member, i) => {
    const place = places[i]!;
    expect(place, member).not.toHaveProperty('miss');
    expect((place as { rank: number | null }).rank ?? null, member).toBe(expected.get(member) ?? null);
  });
  const picked = await h.ctx.leaderboard.pick(scope, members.slice(0, 300));
  expect(picked).not.toHaveProperty('miss');
  const pickedMembers = (picked as { picked: Array<{ member: string }> }).picked.map((p) => p.member);
  expect(pickedMembers).toEqual(
    members
      .slice(0, 300)
      .filter((m) => expected.has(m))
      .sort((a, b) => expected.get(a)! - expected.get(b)!),
  );
}

/**
 * The buckets as Redis holds them: every member once, in the bucket whose range holds it
 * (its lowest id up to the next bucket's, in byte order), at most BUCKET_MAX each, compact,
 * without a TTL, and no key that the index does not name.
 */
async function expectBuckets(board: string, members: number) {
  const index = h.ctx.leaderboard.keys.state(board, PERIOD, 'all');
  const redis = h.ctx.leaderboard.redis;
  const keys: string[] = [];
  for await (const part of stateBuckets(redis, index)) keys.push(...part);
  const lows = keys.map((k) => k.slice(index.length + 1));
  expect(lows[0]).toBe('');
  let held = 0;
  for (const [i, key] of keys.entries()) {
    const fields = await redis.hkeys(key);
    held += fields.length;
    expect(fields.length, key).toBeLessThanOrEqual(BUCKET_MAX);
    if (fields.length === 0) continue;
    expect(await redis.object('ENCODING', key), key).toBe('listpack');
    expect(await redis.ttl(key), key).toBe(-1);
    const next = lows[i + 1];
    for (const f of fields) {
      expect(f >= lows[i]!, `${f} in ${key}`).toBe(true);
      if (next !== undefined) expect(f < next, `${f} in ${key}`).toBe(true);
    }
  }
  expect(held).toBe(members);
  const present = new Set(keys);
  const stray = (await scanMatching(redis, [`${index}:*`])).filter((k) => !present.has(k));
  expect(stray).toEqual([]);
  return keys.length;
}

function randomAggs(rand: () => number, members: readonly string[], versionFrom = 1): Map<string, Agg> {
  return new Map(
    members.map((m) => [
      m,
      {
        value: Math.floor(rand() * 500),
        reachedSec: 1_800_000_000 + Math.floor(rand() * 20),
        version: versionFrom + Math.floor(rand() * 3),
        region: rand() < 0.5 ? 'FR' : 'DE',
        hidden: rand() < 0.05,
      },
    ]),
  );
}

describe('member state buckets', () => {
  const ids = (n: number, from = 0) =>
    Array.from({ length: n }, (_, i) =>
      i % 7 === 0 ? `player.${from + i}@studio-${(from + i) % 13}` : `m${from + i}`,
    );

  it('grow one split at a time as members arrive, every place and pick matching the reference, stale versions dropped', async () => {
    const board = await boardOf('grow', { regions: true });
    const rand = prng(11);
    const members = ids(3000);
    const aggs = randomAggs(rand, members);
    const created = [{ board: board.id, period: PERIOD }];
    // Arrival in small projections, in random order: the state grows from one bucket.
    const order = shuffle(members, rand);
    for (let i = 0; i < order.length; i += 97) {
      const part = order.slice(i, i + 97).map((m) => toState(board.id, m, aggs.get(m)!));
      await h.ctx.leaderboard.project(part, new Map([[board.id, board]]), { createdPeriods: i === 0 ? created : [] });
    }
    const buckets = await expectBuckets(board.id, 3000);
    expect(buckets).toBeGreaterThan(3000 / BUCKET_MAX);
    await expectPlaces(board, aggs);
    await expectPlaces(board, aggs, 'FR');

    // Updates out of order: a newer version wins, an older one arriving later is dropped;
    // some move region, some become hidden, some come back.
    const updates: AggregateState[] = [];
    for (const m of members.slice(0, 1500)) {
      const cur = aggs.get(m)!;
      const newer: Agg = {
        value: Math.floor(rand() * 500),
        reachedSec: cur.reachedSec + 5,
        version: cur.version + 2,
        region: rand() < 0.5 ? 'DE' : 'FR',
        hidden: rand() < 0.05,
      };
      const stale: Agg = { ...cur, value: 10_000, version: cur.version + 1 };
      aggs.set(m, newer);
      updates.push(toState(board.id, m, newer), toState(board.id, m, stale));
    }
    for (let i = 0; i < updates.length; i += 500)
      await h.ctx.leaderboard.project(updates.slice(i, i + 500), new Map([[board.id, board]]));
    await expectBuckets(board.id, 3000);
    await expectPlaces(board, aggs);
    await expectPlaces(board, aggs, 'DE');

    // Erasure takes the state out too: the count goes down, the rest moves up.
    for (const m of members.slice(2000, 2040)) {
      await h.ctx.leaderboard.erase([{ board, period: PERIOD }], m);
      aggs.delete(m);
    }
    await expectBuckets(board.id, 2960);
    await expectPlaces(board, aggs);

    // A bucket erased empty leaves the index: its range joins the one before.
    const index = h.ctx.leaderboard.keys.state(board.id, PERIOD, 'all');
    const low = (await h.ctx.leaderboard.redis.zrange(index, '1', '1'))[0]!;
    for (const m of await h.ctx.leaderboard.redis.hkeys(`${index}:${low}`)) {
      await h.ctx.leaderboard.erase([{ board, period: PERIOD }], m);
      aggs.delete(m);
    }
    expect(await h.ctx.leaderboard.redis.zscore(index, low)).toBeNull();
    await expectBuckets(board.id, aggs.size);
    await expectPlaces(board, aggs);

    // An erased member names no bucket: the bucket named after them takes its lowest
    // remaining id's name, in the key and in the index, and every place still matches.
    const redis = h.ctx.leaderboard.redis;
    const namesakes = (await redis.zrange(index, '1', '5')).filter((name) => name !== '');
    expect(namesakes.length).toBeGreaterThan(2);
    for (const namesake of namesakes) {
      const rest = (await redis.hkeys(`${index}:${namesake}`)).filter((m) => m !== namesake).sort();
      await h.ctx.leaderboard.erase([{ board, period: PERIOD }], namesake);
      aggs.delete(namesake);
      expect(await redis.zscore(index, namesake)).toBeNull();
      expect(await redis.exists(`${index}:${namesake}`)).toBe(0);
      expect((await redis.hkeys(`${index}:${rest[0]}`)).sort()).toEqual(rest);
      expect(await redis.zscore(index, rest[0]!)).toBe('0');
    }
    const names = await redis.keys(`${h.ctx.leaderboard.keys.period(board.id, PERIOD)}*`);
    for (const namesake of namesakes) expect(names.filter((k) => k.includes(namesake))).toEqual([]);
    await expectBuckets(board.id, aggs.size);
    await expectPlaces(board, aggs);
    // Members arriving in a renamed bucket's old range land in the bucket before it, still exact.
    const back = namesakes.map((m) =>
      toState(board.id, m, { value: 42, reachedSec: 1, version: 1, region: 'DE', hidden: false }),
    );
    await h.ctx.leaderboard.project(back, new Map([[board.id, board]]));
    for (const m of namesakes) aggs.set(m, { value: 42, reachedSec: 1, version: 1, region: 'DE', hidden: false });
    await expectBuckets(board.id, aggs.size);
    await expectPlaces(board, aggs);
  });

  it('a rebuild fills buckets in member order and swaps them in whole, with live writes (replayed) and an erasure during it, and leaves no temp key behind', async () => {
    const board = await boardOf('swapped');
    const rand = prng(12);
    const byId = new Map([[board.id, board]]);
    // The live state first: 2,500 members, more buckets than the rebuild will have.
    const before = randomAggs(rand, ids(2500));
    await h.ctx.leaderboard.project(
      [...before].map(([m, a]) => toState(board.id, m, a)),
      byId,
      { createdPeriods: [{ board: board.id, period: PERIOD }] },
    );
    const liveBuckets = await expectBuckets(board.id, 2500);

    // The rebuild holds 1,200 members (some old, some new); pages in member order.
    const rebuilt = randomAggs(rand, ids(1200, 2000), 1);
    const writer = new ScopeRebuildWriter(h.ctx.leaderboard, board, PERIOD, 'all', 'tok-1');
    await writer.begin();
    const pages = [...rebuilt.keys()].sort();
    const truth = new Map(rebuilt);
    for (let i = 0; i < pages.length; i += 250) {
      if (i === 500) {
        // Live projections reach the rebuild too (replayed before the swap): a newer version
        // of a member already filled, one the fill will bring later with an older version,
        // and a newcomer.
        const filled = pages[10]!;
        const later = pages[1100]!;
        const live: Array<[string, Agg]> = [
          [filled, { ...truth.get(filled)!, value: 999, version: 50 }],
          [later, { ...truth.get(later)!, value: 998, version: 50 }],
          ['newcomer', { value: 997, reachedSec: 1_800_000_000, version: 1, region: null, hidden: false }],
        ];
        for (const [m, a] of live) truth.set(m, a);
        await h.ctx.leaderboard.project(
          live.map(([m, a]) => toState(board.id, m, a)),
          byId,
        );
        await h.ctx.leaderboard.erase([{ board, period: PERIOD }], pages[20]!);
        truth.delete(pages[20]!);
      }
      const page = pages.slice(i, i + 250).map((m) => toState(board.id, m, rebuilt.get(m)!));
      expect(await writer.fill(page)).toBe(true);
    }
    expect(await writer.swap()).toBe('swapped');
    const buckets = await expectBuckets(board.id, truth.size);
    expect(buckets).toBeLessThan(liveBuckets);
    await expectPlaces(board, truth);
    const base = h.ctx.leaderboard.keys.period(board.id, PERIOD);
    expect(await scanMatching(h.ctx.leaderboard.redis, [`${base}:t:*`])).toEqual([]);

    // The period's eviction removes every bucket, then the meta hash.
    await unlinkPeriodKeys(h.ctx.leaderboard.redis, h.ctx.leaderboard.keys, {
      board: board.id,
      period: PERIOD,
      categories: ['all'],
    });
    expect(await scanMatching(h.ctx.leaderboard.redis, [`${base}:*`])).toEqual([]);
  });

  it('live writes that arrive before the first page and between pages wait, more than one replay step of them, and the newer version wins either way', async () => {
    const board = await boardOf('replayed', { regions: true });
    const rand = prng(13);
    const byId = new Map([[board.id, board]]);
    await h.ctx.leaderboard.project([], byId, { createdPeriods: [{ board: board.id, period: PERIOD }] });
    const rebuilt = randomAggs(rand, ids(900), 5);
    const writer = new ScopeRebuildWriter(h.ctx.leaderboard, board, PERIOD, 'all', 'tok-2');
    await writer.begin();
    const truth = new Map(rebuilt);
    // 1,300 live writes before any page: 600 of the rebuild's members (half newer, half
    // older than what the fill brings), 700 newcomers.
    const live = new Map<string, Agg>();
    for (const [i, m] of [...rebuilt.keys()].slice(0, 600).entries()) {
      const a = rebuilt.get(m)!;
      live.set(m, {
        ...a,
        value: a.value + 1000,
        version: i % 2 === 0 ? a.version + 1 : a.version - 1,
        region: i % 3 === 0 ? 'JP' : a.region,
      });
    }
    for (const m of ids(700, 5000)) live.set(m, randomAggs(rand, [m]).get(m)!);
    for (const [m, a] of live) if (!truth.has(m) || a.version > truth.get(m)!.version) truth.set(m, a);
    await h.ctx.leaderboard.project(
      [...live].map(([m, a]) => toState(board.id, m, a)),
      byId,
    );
    const members = [...rebuilt.keys()].sort();
    for (let i = 0; i < members.length; i += 300) {
      expect(await writer.fill(members.slice(i, i + 300).map((m) => toState(board.id, m, rebuilt.get(m)!)))).toBe(true);
    }
    expect(await writer.swap()).toBe('swapped');
    await expectBuckets(board.id, truth.size);
    await expectPlaces(board, truth);
    await expectPlaces(board, truth, 'JP');
  });

  it('a page out of member order is refused before it is written, and an abandoned rebuild removes its temp keys', async () => {
    const board = await boardOf('unordered');
    const writer = new ScopeRebuildWriter(h.ctx.leaderboard, board, PERIOD, 'all', 'tok-3');
    await writer.begin();
    const a: Agg = { value: 1, reachedSec: 1_800_000_000, version: 1, region: null, hidden: false };
    expect(await writer.fill([toState(board.id, 'a', a)])).toBe(true);
    await expect(writer.fill([toState(board.id, 'c', a), toState(board.id, 'b', a)])).rejects.toThrow(
      /out of member order/,
    );
    // Given up: its temp keys go at once, not when they expire.
    await writer.abandon();
    expect(
      await scanMatching(h.ctx.leaderboard.redis, [`${h.ctx.leaderboard.keys.period(board.id, PERIOD)}:t:*`]),
    ).toEqual([]);
  });

  it('a Redis written by the earlier layout is not trusted: reads go to Postgres and a handover is owed', async () => {
    const redis = h.ctx.leaderboard.redis;
    const prefix = h.env.REDIS_PREFIX;
    const old = `${prefix}:lb:{legacy|all}`;
    await redis.hset(`${old}:ok`, 'all', '1');
    await redis.set(`${prefix}:lb:instance`, 'then');
    await releaseInstanceMarkers(h.ctx.leaderboard, prefix);
    // No rebuild now (a 0.2.0 worker may still be writing): the handover rebuilds once none is.
    expect(await rebuildIfLeaderboardLost(h.ctx)).toBeNull();
    expect(h.ctx.leaderboard.access.reads).toBe(false);
    expect(await redis.exists(`${prefix}:lb:instance`)).toBe(0);
    expect(await redis.exists(`${prefix}:lb:{layout}:handover`, `${prefix}:lb:{layout}:mixed`)).toBe(2);
    await redis.del(`${prefix}:lb:{layout}:handover`, `${prefix}:lb:{layout}:mixed`);
    h.ctx.leaderboard.access.reads = true;
    // Claimed now: the next start leaves everything alone.
    expect(await rebuildIfLeaderboardLost(h.ctx)).toBeNull();
    // A Redis that lost its data (its marker gone, no earlier layout) rebuilds, and keeps
    // the completeness marks it still has.
    await releaseInstanceMarkers(h.ctx.leaderboard, prefix);
    expect(await rebuildIfLeaderboardLost(h.ctx)).not.toBeNull();
    expect(await redis.hget(`${old}:ok`, 'all')).toBe('1');
  });

  it('a page sent twice (a client resending after a dropped connection) is written once; a page out of turn, or after the replay began, is refused', async () => {
    const board = await boardOf('resent');
    const redis = h.ctx.leaderboard.redis;
    const base = h.ctx.leaderboard.keys.period(board.id, PERIOD);
    await h.ctx.leaderboard.project([], new Map([[board.id, board]]), {
      createdPeriods: [{ board: board.id, period: PERIOD }],
    });
    const aggs = randomAggs(prng(14), ids(300));
    const members = [...aggs.keys()].sort();
    const args = (from: number, to: number) =>
      members.slice(from, to).flatMap((m) => {
        const a = aggs.get(m)!;
        return [
          m,
          String(a.version),
          String(-a.value),
          a.hidden ? '' : `${String(a.reachedSec).padStart(11, '0')}${m}`,
          a.region ?? '',
        ];
      });
    await redis.laurelRebuildBegin(base, 'all', 'tok-4', 60);
    expect(await redis.laurelRebuildFill(base, 'all', 'tok-4', 60, '', ...args(0, 200))).toBe(1);
    expect(await redis.laurelRebuildFill(base, 'all', 'tok-4', 60, '', ...args(0, 200))).toBe(1);
    await expect(redis.laurelRebuildFill(base, 'all', 'tok-4', 60, members[150]!, ...args(151, 300))).rejects.toThrow(
      /out of turn/,
    );
    expect(await redis.laurelRebuildFill(base, 'all', 'tok-4', 60, members[199]!, ...args(200, 300))).toBe(1);
    expect(await redis.laurelRebuildReplay(base, 'all', 'tok-4', 500)).toBe(0);
    await expect(redis.laurelRebuildFill(base, 'all', 'tok-4', 60, members[299]!, ...args(200, 300))).rejects.toThrow(
      /out of turn/,
    );
    expect(await redis.laurelRebuildSwap(base, 'all', 'tok-4')).toBe(1);
    await expectBuckets(board.id, 300);
    await expectPlaces(board, aggs);
  });
});
