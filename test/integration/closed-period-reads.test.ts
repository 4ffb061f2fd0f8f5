import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, type Harness } from '../support/harness.js';
import { openSse } from '../support/sse-client.js';
import { referenceStandings, type RefEvent, wireEvent } from '../support/reference.js';
import { until } from '../support/poll.js';
import { runTick } from '../../src/services/period-tick.js';
import { processScopeRebuild } from '../../src/services/scope-rebuild.js';
import { scanMatching } from '../../src/storage/redis/maintenance.js';
import { verifyLeaderboards } from '../../src/services/verify-service.js';

/**
 * A closed period that is not retired yet reads like a retired one whenever Redis cannot
 * answer for it exactly: with its keys lost, and after an erasure, every standings route
 * answers its stored final results (the same ranks, the erased member renamed), and no
 * automatic rebuild refills it from aggregates.
 */

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const BOARD = 'closed-reads';
const PERIOD = '2026-11';
const REGIONS = ['FR', 'DE', 'ES'];
const SCOPES = ['', '&category=duel', '&region=FR', '&category=duel&region=DE'];
const FOLLOWED = ['m00', 'm16', 'm03'];

/** `laurel verify` of the closed period: its Redis keys, where present, against its final results. */
async function verifyProblems(): Promise<string[]> {
  return (await verifyLeaderboards(h.ctx, { board: BOARD, period: PERIOD })).differences.map(
    (d) => `${d.category}/${d.region}: ${d.problem}`,
  );
}

interface Entry {
  rank: number;
  member: string;
  displayName: string | null;
  score: number;
}
interface Final {
  total: number;
  entries: Entry[];
}

async function finalResults(): Promise<Map<string, Final>> {
  const out = new Map<string, Final>();
  for (const q of SCOPES) {
    const res = await h.api('GET', `/v1/boards/${BOARD}/periods/${PERIOD}/results?limit=200${q}`);
    expect(res.status).toBe(200);
    out.set(q, { total: res.body.total, entries: res.body.entries });
  }
  return out;
}

async function periodKeys(): Promise<string[]> {
  return scanMatching(h.ctx.leaderboard.redis, [`${h.ctx.leaderboard.keys.period(BOARD, PERIOD)}:*`]);
}

/** What a member's standing must be in a scope, read from the final results. */
function placementIn(final: Final, member: string) {
  const e = final.entries.find((x) => x.member === member);
  return e
    ? {
        member,
        rank: e.rank,
        score: e.score,
        percentile: e.rank / final.total,
        topPercent: Math.max(1, Math.round((e.rank / final.total) * 100)),
      }
    : { member, rank: null, score: null, percentile: null, topPercent: null };
}

/**
 * Reads every standings route in every scope for the probed members and checks each answer
 * against the final results; returns the sources the answers named.
 */
async function checkRoutes(finals: Map<string, Final>, probes: readonly string[]): Promise<Set<string>> {
  const sources = new Set<string>();
  const get = async (path: string) => {
    const res = await h.api('GET', path);
    expect(res.status, path).toBe(200);
    sources.add(res.body.source);
    return res.body;
  };
  const base = `/v1/boards/${BOARD}/standings`;
  for (const q of SCOPES) {
    const final = finals.get(q)!;
    const page = await get(`${base}?period=${PERIOD}&limit=200${q}`);
    expect(page, q).toMatchObject({ total: final.total, period: { key: PERIOD, state: 'closed' } });
    expect(page.entries, q).toEqual(final.entries);
    const offset = await get(`${base}?period=${PERIOD}&limit=4&offset=3${q}`);
    expect(offset.entries, q).toEqual(final.entries.slice(3, 7));
    const picked = [...probes, final.entries[0]!.member].join(',');
    const some = await get(`${base}?period=${PERIOD}&members=${picked}${q}`);
    expect(some.total).toBe(final.total);
    expect(some.entries, `members ${q}`).toEqual(final.entries.filter((e) => picked.split(',').includes(e.member)));
    for (const m of probes) {
      const withMe = await get(`${base}?period=${PERIOD}&limit=3&member=${m}${q}`);
      expect(withMe.entries).toEqual(final.entries.slice(0, 3));
      expect(withMe.me, `me ${m} ${q}`).toEqual(placementIn(final, m));
      const one = await get(`${base}/${m}?period=${PERIOD}${q}`);
      expect(one, `${m} ${q}`).toMatchObject({ total: final.total, ...placementIn(final, m) });
      const around = await get(`${base}/${m}/around?period=${PERIOD}&radius=2${q}`);
      const at = final.entries.findIndex((e) => e.member === m);
      expect(around.entries, `around ${m} ${q}`).toEqual(
        at < 0 ? [] : final.entries.slice(Math.max(0, at - 2), at + 3),
      );
      expect(around.total).toBe(final.total);
    }
  }
  // m07's group (themselves and those they follow), ranked among themselves in each scope.
  const group = ['m07', ...FOLLOWED];
  for (const q of SCOPES) {
    const among = finals
      .get(q)!
      .entries.filter((e) => group.includes(e.member))
      .map((e, i) => ({ ...e, rank: i + 1 }));
    const following = await get(`${base}/m07/following?period=${PERIOD}${q}`);
    expect(following, `following ${q}`).toMatchObject({
      total: among.length,
      rank: among.find((e) => e.member === 'm07')?.rank ?? null,
    });
    expect(following.entries, `following ${q}`).toEqual(among);
  }
  for (const m of probes) {
    const across = await h.api('GET', `/v1/members/${m}/standings?period=${PERIOD}`);
    const mine = across.body.standings.find((s: any) => s.board === BOARD);
    const { member: _m, ...expected } = placementIn(finals.get('')!, m);
    expect(mine, `across ${m}`).toMatchObject({ total: finals.get('')!.total, ...expected });
    sources.add(mine.source);
  }
  return sources;
}

describe('reads of a closed period that is not retired', () => {
  const events: RefEvent[] = [];
  let finals: Map<string, Final>;

  it('answers from the final results, with the same ranks, when its Redis keys are lost, and asks for no rebuild', async () => {
    h.clock.set('2026-11-20T12:00:00Z');
    await h.api('PUT', `/v1/boards/${BOARD}`, {
      aggregation: 'best',
      tieBreak: 'first',
      categories: ['duel'],
      regions: true,
      graceSeconds: 0,
    });
    for (let i = 0; i < 24; i += 1) {
      const m = `m${String(i).padStart(2, '0')}`;
      await h.api('PUT', `/v1/members/${m}`, { region: REGIONS[i % 3], displayName: `Player ${i}` });
      // Few distinct values and shared seconds: ties broken by time, then by id.
      events.push({
        key: `k-${m}`,
        member: m,
        units: (i * 7) % 6,
        atMs: Date.parse('2026-11-20T10:00:00Z') + (i % 4) * 1000,
        ...(i % 2 ? { category: 'duel' } : {}),
      });
    }
    await h.postEvents(events.map((e) => wireEvent(BOARD, e)));
    expect((await h.api('PUT', '/v1/members/m07/following', { memberIds: FOLLOWED })).status).toBe(200);
    h.clock.set('2026-12-01T00:00:00Z');
    expect((await runTick(h.ctx)).closed).toContain(`${BOARD}/${PERIOD}`);

    finals = await finalResults();
    // The stored final results are the rules' ranking (an independent model).
    const world = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'first' });
    expect(finals.get('')!.entries.map((e) => [e.rank, e.member, e.score])).toEqual(
      world.map((s) => [s.rank, s.member, s.units]),
    );
    const duel = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'first' }, 'duel');
    expect(finals.get('&category=duel')!.entries.map((e) => [e.rank, e.member, e.score])).toEqual(
      duel.map((s) => [s.rank, s.member, s.units]),
    );

    const probes = ['m03', 'm07', 'm16', 'nobody'];
    expect(await checkRoutes(finals, probes)).toEqual(new Set(['cache']));

    // Redis loses the period (a flush, a restart without persistence).
    const keys = await periodKeys();
    expect(keys.length).toBeGreaterThan(0);
    await h.ctx.leaderboard.redis.unlink(...keys);
    expect(await checkRoutes(finals, probes)).toEqual(new Set(['database']));
    // A stream of the period sends the final state from the results too, then `closed`.
    const stream = await openSse(
      `${h.baseUrl}/v1/boards/${BOARD}/standings/m03/stream?period=${PERIOD}&region=FR`,
      ADMIN_KEY,
    );
    expect(stream.status).toBe(200);
    await stream.ended;
    expect(stream.messages.map((m) => m.event)).toEqual(['standing', 'closed']);
    expect(stream.messages[0]!.data).toMatchObject({
      source: 'database',
      ...placementIn(finals.get('&region=FR')!, 'm03'),
    });
    // The reads asked for no rebuild: nothing comes back into Redis.
    await h.drain();
    expect(await periodKeys()).toEqual([]);
    const scopeJobs = await h.ctx.rebuildQueue.getJobs([
      'completed',
      'failed',
      'waiting',
      'active',
      'prioritized',
      'delayed',
    ]);
    expect(scopeJobs.filter((j) => j.name === 'scope')).toEqual([]);
    // Nothing in Redis is no difference for a closed period: its reads use the final results.
    expect(await verifyProblems()).toEqual([]);
  });

  it('skips an automatic rebuild of the closed period; an admin rebuild still refills it', async () => {
    for (const trigger of ['read', 'projection', 'moderation']) {
      expect(await processScopeRebuild(h.ctx, { board: BOARD, period: PERIOD, category: 'all', trigger })).toEqual({
        skipped: 'closed',
      });
    }
    expect(await periodKeys()).toEqual([]);

    const asked = await h.api('POST', '/v1/admin/rebuilds', { board: BOARD, period: PERIOD });
    expect(asked.status).toBe(202);
    await h.drain();
    expect((await periodKeys()).length).toBeGreaterThan(0);
    expect(await checkRoutes(finals, ['m03', 'm07', 'nobody'])).toEqual(new Set(['cache']));
    expect(await verifyProblems()).toEqual([]);
  });

  it('after an exclusion and an erasure, answers the final results: other ranks unchanged, the erased member renamed', async () => {
    // An exclusion after the close changes no closed standing, cached or not.
    expect((await h.api('POST', '/v1/members/m07/exclusion', { reason: 'after the close' })).status).toBe(200);
    await h.drain();
    expect(await checkRoutes(finals, ['m03', 'm07', 'nobody'])).toEqual(new Set(['cache']));
    // Verify compares the keys with the final results (the aggregates now hide m07).
    expect(await verifyProblems()).toEqual([]);
    const scope = h.ctx.leaderboard.keys.scope(BOARD, PERIOD, 'all');
    const [first] = await h.ctx.leaderboard.redis.zrange(scope, '0', '0', 'WITHSCORES');
    await h.ctx.leaderboard.redis.zrem(scope, first!);
    expect((await verifyProblems()).length).toBeGreaterThan(0);
    await h.ctx.leaderboard.redis.zadd(
      scope,
      (await h.ctx.leaderboard.redis.zrange(scope, '0', '0', 'WITHSCORES'))[1]!,
      first!,
    );

    // m03 is ranked mid-table in the world, in duel and in region FR... (every 3rd member is FR: m03 is FR).
    const target = 'm03';
    const erased = await h.api('DELETE', `/v1/members/${target}`);
    expect(erased.status).toBe(202);
    await until('the erasure is done', async () => {
      const status = await h.api('GET', `/v1/admin/erasures/${erased.body.erasureId}`);
      return status.body.state === 'done' ? true : undefined;
    });
    await h.drain();

    const after = await finalResults();
    const pseudonym = after.get('')!.entries.find((e) => e.member.startsWith('erased:'))!.member;
    expect(pseudonym).toMatch(/^erased:[0-9a-f]{12}$/);
    for (const q of SCOPES) {
      const renamed = finals
        .get(q)!
        .entries.map((e) => (e.member === target ? { ...e, member: pseudonym, displayName: null } : e));
      expect(after.get(q)!.entries, q).toEqual(renamed);
    }
    expect(finals.get('&region=FR')!.entries.map((e) => e.member)).toContain(target);
    expect(await checkRoutes(after, [target, 'm07', 'm16', 'nobody'])).toEqual(new Set(['database']));
    // Redis keeps nothing of the member, and the period is read from its results from now on.
    for (const key of await periodKeys()) {
      const type = await h.ctx.leaderboard.redis.type(key);
      const dump =
        type === 'zset'
          ? await h.ctx.leaderboard.redis.zrange(key, '0', '-1')
          : type === 'hash'
            ? Object.keys(await h.ctx.leaderboard.redis.hgetall(key))
            : [];
      expect(
        dump.filter((m) => m.includes(target)),
        key,
      ).toEqual([]);
    }
  });
});
