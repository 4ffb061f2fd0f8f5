import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { Redis } from 'ioredis';
import { createHarness, type Harness } from '../support/harness.js';
import { TEST_REDIS_CLUSTER, testRedis } from '../support/databases.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { prng, referenceStandings, shuffle, type RefEvent, wireEvent } from '../support/reference.js';
import { verifyLeaderboards } from '../../src/services/verify-service.js';
import { rebuildIfLeaderboardLost } from '../../src/services/rebuild-service.js';
import { leaderboardKeysOfPrefix, unlinkMatching } from '../../src/storage/redis/maintenance.js';
import type { RedisClient } from '../../src/storage/redis/connections.js';

// Standalone: the leaderboards live on a redis-server of this file's own, so that it can
// FLUSHDB it without touching any Redis the machine shares. Cluster (database 0 only, the
// queues in the same private cluster): losing the leaderboard Redis is losing every
// leaderboard key of this harness on every master, one slot at a time, so that each
// (board, period) vanishes at once, as in a flush; the queues stay.
const NOW = new Date('2026-12-02T12:00:00Z');

let h: Harness;
let flusher: RedisClient;
let leaderboardRedis: PrivateRedis | undefined;
async function loseLeaderboardRedis(): Promise<void> {
  if (TEST_REDIS_CLUSTER) await unlinkMatching(flusher, leaderboardKeysOfPrefix(h.env.REDIS_PREFIX));
  else await flusher.flushdb();
}
beforeAll(async () => {
  if (TEST_REDIS_CLUSTER) {
    flusher = testRedis();
    h = await createHarness({ concurrency: 4 });
  } else {
    leaderboardRedis = await startPrivateRedis();
    flusher = new Redis(leaderboardRedis.url);
    h = await createHarness({ concurrency: 4, env: { LEADERBOARD_REDIS_URL: leaderboardRedis.url } });
  }
  h.clock.set(NOW);
});
afterAll(async () => {
  await h.close();
  flusher.disconnect();
  await leaderboardRedis?.stop();
});

const wire = (board: string, e: RefEvent) => wireEvent(board, e);

async function waitForRebuild(rebuildId: string) {
  for (;;) {
    const status = await h.api('GET', `/v1/admin/rebuilds/${rebuildId}`);
    expect(status.status).toBe(200);
    if (status.body.state === 'completed') return status.body;
    expect(status.body.state).not.toBe('failed');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function expectNoDifference(board?: string) {
  const report = await verifyLeaderboards(h.ctx, board ? { board } : {});
  expect(report.differences).toEqual([]);
  expect(report.missing).toEqual([]);
  expect(report.scopes).toBeGreaterThan(0);
}

describe('losing the leaderboard Redis', () => {
  it('FLUSHDB during a stream of events: reads stay right, scopes rebuild, nothing is lost', async () => {
    await h.api('PUT', '/v1/boards/stream', {
      aggregation: 'sum',
      categories: ['kills'],
      regions: true,
      tieBreak: 'first',
    });
    const rand = prng(11);
    for (let i = 0; i < 40; i += 1) await h.api('PUT', `/v1/members/s${i}`, { region: i % 3 === 0 ? 'FR' : 'DE' });
    const events: RefEvent[] = Array.from({ length: 3000 }, (_, i) => ({
      key: `st-${i}`,
      member: `s${Math.floor(rand() * 40)}`,
      units: Math.floor(rand() * 10),
      atMs: NOW.getTime() - 3_600_000 + Math.floor(rand() * 3_000_000),
      category: rand() < 0.5 ? 'kills' : undefined,
    }));
    for (let i = 0; i < events.length; i += 100) {
      if (i === 1500) await loseLeaderboardRedis();
      if (i > 1500 && i % 500 === 0) {
        // Reads meanwhile are answered (from Postgres while the scope is missing).
        const read = await h.api('GET', '/v1/boards/stream/standings');
        expect(read.status).toBe(200);
      }
      expect(
        (await h.api('POST', '/v1/events', { events: events.slice(i, i + 100).map((e) => wire('stream', e)) })).status,
      ).toBe(202);
    }
    await h.drain(60_000);
    await expectNoDifference('stream');
    const expected = referenceStandings(events, { aggregation: 'sum', order: 'desc', tieBreak: 'first' });
    const page = await h.api('GET', '/v1/boards/stream/standings?limit=200');
    expect(page.body.source).toBe('cache');
    expect(page.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
      expected.map((e) => [e.rank, e.member, e.units]),
    );
  });

  it('a thousand concurrent reads of a lost scope: each right or 503 with Retry-After, one rebuild, other routes answering', async () => {
    await h.api('PUT', '/v1/boards/herd', { aggregation: 'best', tieBreak: 'shared' });
    const rand = prng(5);
    const events: RefEvent[] = Array.from({ length: 300 }, (_, i) => ({
      key: `hd-${i}`,
      member: `h${i}`,
      units: Math.floor(rand() * 40),
      atMs: NOW.getTime() - 60_000,
    }));
    expect((await h.api('POST', '/v1/events?wait=true', { events: events.map((e) => wire('herd', e)) })).status).toBe(
      200,
    );
    const expected = referenceStandings(events, { aggregation: 'best', order: 'desc', tieBreak: 'shared' });

    const rebuildWorker = h.workers!.workers[1]!;
    await rebuildWorker.pause();
    try {
      await loseLeaderboardRedis();
      const burst = Promise.all(
        Array.from({ length: 1000 }, (_, i) => {
          const who = expected[i % expected.length]!;
          return i % 10 === 0
            ? h.api('GET', '/v1/boards/herd/standings?limit=20&offset=' + (i % 280))
            : h.api('GET', `/v1/boards/herd/standings/${who.member}`);
        }),
      );
      // Started while the burst is in flight: the fallback's own pool and its bound leave
      // the rest of the service its connections.
      const others = await Promise.all([
        h.api('GET', '/v1/boards/herd'),
        h.api('POST', '/v1/events', {
          events: [wire('herd', { key: 'hd-during', member: 'h0', units: 0, atMs: NOW.getTime() - 60_000 })],
        }),
        h.api('GET', '/readyz'),
        h.api('GET', '/v1/members/h1'),
      ]);
      expect(others.map((r) => r.status)).toEqual([200, 202, 200, 200]);
      const reads = await burst;
      let answered = 0;
      reads.forEach((res, i) => {
        if (res.status === 503) {
          // Refused by the per-process bound on fallback reads: retry shortly.
          expect(res.body.error).toBe('unavailable');
          expect(res.headers.get('retry-after')).toBe('1');
          return;
        }
        answered += 1;
        expect(res.status).toBe(200);
        expect(res.body.source).toBe('database');
        if (i % 10 === 0) {
          const offset = i % 280;
          expect(res.body.entries.map((e: any) => [e.rank, e.member, e.score])).toEqual(
            expected.slice(offset, offset + 20).map((e) => [e.rank, e.member, e.units]),
          );
        } else {
          const who = expected[i % expected.length]!;
          expect(res.body).toMatchObject({ rank: who.rank, score: who.units, total: 300 });
        }
      });
      expect(answered).toBeGreaterThanOrEqual(h.env.FALLBACK_MAX_CONCURRENT);
      const queued = await h.ctx.rebuildQueue.getJobs(['waiting', 'prioritized', 'active', 'delayed']);
      expect(queued.map((j) => j.data)).toEqual([
        { board: 'herd', period: '2026-12', category: 'all', trigger: 'read' },
      ]);
    } finally {
      await rebuildWorker.resume();
    }
    await h.drain();
    const after = await h.api('GET', `/v1/boards/herd/standings/${expected[7]!.member}`);
    expect(after.body).toMatchObject({ source: 'cache', rank: expected[7]!.rank });
    await expectNoDifference('herd');
  });

  it('a worker starting against an empty leaderboard Redis rebuilds every open period', async () => {
    await loseLeaderboardRedis();
    const rebuildId = await rebuildIfLeaderboardLost(h.ctx);
    expect(rebuildId).not.toBeNull();
    const status = await waitForRebuild(rebuildId!);
    expect(status.request.trigger).toBe('startup');
    expect(await rebuildIfLeaderboardLost(h.ctx)).toBeNull();
    await h.drain();
    await expectNoDifference();
  });
});

describe('rebuilding', () => {
  it('rebuilds a 200,000-member scope while events keep arriving, with progress, and loses nothing', async () => {
    await h.api('PUT', '/v1/boards/huge', { aggregation: 'best', tieBreak: 'first' });
    // The test writes the ledger and the aggregates straight into Postgres: one event per member.
    await sql`INSERT INTO periods (board_id, key, starts_at, ends_at) VALUES ('huge', '2026-12', '2026-12-01T00:00:00Z', '2027-01-01T00:00:00Z')`.execute(
      h.ctx.db,
    );
    await sql`INSERT INTO members (id) SELECT 'u' || lpad(g::text, 6, '0') FROM generate_series(1, 200000) g ON CONFLICT DO NOTHING`.execute(
      h.ctx.db,
    );
    await sql`
      INSERT INTO score_events (idempotency_key, board_id, period_key, member_id, value, occurred_at, received_at, applied_at, payload_hash)
      SELECT 'hg-' || g, 'huge', '2026-12', 'u' || lpad(g::text, 6, '0'), (g * 7919) % 100000,
             timestamptz '2026-12-02T10:00:00Z' + make_interval(secs => g % 3600), now(), now(), 'seeded'
        FROM generate_series(1, 200000) g`.execute(h.ctx.db);
    await sql`
      INSERT INTO member_aggregates (board_id, period_key, category, member_id, value, reached_at, last_key, event_count, version)
      SELECT board_id, period_key, 'all', member_id, value, occurred_at, idempotency_key, 1, 1 FROM score_events WHERE board_id = 'huge'`.execute(
      h.ctx.db,
    );

    const started = await h.api('POST', '/v1/admin/rebuilds', { board: 'huge' });
    expect(started).toMatchObject({ status: 202, body: { scopes: 1 } });
    // Events keep arriving during the rebuild: better scores for existing members, and new members.
    for (let i = 0; i < 20; i += 1) {
      const batch = Array.from({ length: 50 }, (_, k) => ({
        board: 'huge',
        member: k % 2 ? `u${String(1 + (((i * 50 + k) * 3989) % 200000)).padStart(6, '0')}` : `new-${i}-${k}`,
        value: 100000 + i * 50 + k,
        idempotencyKey: `live-${i}-${k}`,
        occurredAt: '2026-12-02T11:00:00Z',
      }));
      expect((await h.api('POST', '/v1/events', { events: batch })).status).toBe(202);
    }
    const status = await waitForRebuild(started.body.rebuildId);
    expect(status.progress).toMatchObject({ done: 1, failed: 0, total: 1, percent: 100 });
    expect(status.scopes[0]).toMatchObject({ board: 'huge', period: '2026-12', category: 'all', recomputed: false });
    expect(status.scopes[0].members).toBeGreaterThanOrEqual(200000);
    await h.drain();
    await expectNoDifference('huge');
    const top = await h.api('GET', '/v1/boards/huge/standings?limit=3');
    expect(top.body).toMatchObject({ source: 'cache', total: 200500 });
    expect(top.body.entries[0]).toMatchObject({ rank: 1, score: 100999 });
  }, 240000);

  it('fromEvents recomputes every aggregation and tie rule exactly as live ingestion did', async () => {
    const rand = prng(21);
    const boards: string[] = [];
    for (const aggregation of ['best', 'sum', 'last'] as const) {
      for (const order of ['desc', 'asc'] as const) {
        for (const tieBreak of ['first', 'last', 'member', 'shared'] as const) {
          const id = `fe-${aggregation}-${order}-${tieBreak}`;
          boards.push(id);
          await h.api('PUT', `/v1/boards/${id}`, { aggregation, order, tieBreak, categories: ['c1'] });
          const events: RefEvent[] = Array.from({ length: 150 }, (_, i) => ({
            key: `${id}-${i}`,
            member: `f${Math.floor(rand() * 25)}`,
            units: Math.floor(rand() * 6),
            atMs: NOW.getTime() - 3_600_000 + Math.floor(rand() * 20) * 1000 + Math.floor(rand() * 900),
            category: rand() < 0.4 ? 'c1' : undefined,
          }));
          for (const part of [events.slice(0, 75), events.slice(75)]) {
            await h.api('POST', '/v1/events', { events: shuffle(part, rand).map((e) => wire(id, e)) });
          }
        }
      }
    }
    await h.drain();
    const snapshot = async () =>
      (
        await sql<{ row: string }>`
          SELECT concat_ws('|', board_id, period_key, category, member_id, value, reached_at, last_key, event_count) AS row
            FROM member_aggregates WHERE board_id LIKE 'fe-%' ORDER BY 1`.execute(h.ctx.db)
      ).rows.map((r) => r.row);
    const live = await snapshot();
    const liveStandings = await Promise.all(
      boards.map((b) => h.api('GET', `/v1/boards/${b}/standings?limit=200`).then((r) => r.body.entries)),
    );
    // Damage the aggregates, so that only a recomputation from the ledger can restore them.
    await sql`UPDATE member_aggregates SET value = value + 1000, event_count = event_count + 1 WHERE board_id LIKE 'fe-%'`.execute(
      h.ctx.db,
    );

    for (const board of boards) {
      const started = await h.api('POST', '/v1/admin/rebuilds', { board, fromEvents: true });
      expect(started.status).toBe(202);
      const status = await waitForRebuild(started.body.rebuildId);
      expect(status.scopes.map((s: any) => s.recomputed)).toEqual([true, true]);
    }
    expect(await snapshot()).toEqual(live);
    const rebuilt = await Promise.all(
      boards.map((b) => h.api('GET', `/v1/boards/${b}/standings?limit=200`).then((r) => r.body.entries)),
    );
    expect(rebuilt).toEqual(liveStandings);
    for (const board of boards) await expectNoDifference(board);
  });

  it('validates rebuild requests and answers 404 for unknown rebuilds', async () => {
    expect((await h.api('POST', '/v1/admin/rebuilds', { board: 'nope' })).status).toBe(404);
    expect((await h.api('POST', '/v1/admin/rebuilds', { period: '2026-12' })).status).toBe(400);
    expect((await h.api('POST', '/v1/admin/rebuilds', { board: 'huge', period: '2020-01' })).status).toBe(404);
    expect((await h.api('GET', '/v1/admin/rebuilds/00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect((await h.api('GET', '/v1/admin/rebuilds/x')).status).toBe(404);
  });
});
