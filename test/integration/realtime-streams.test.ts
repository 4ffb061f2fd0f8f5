import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, ADMIN_KEY, type Harness } from '../support/harness.js';
import { openSse, type SseClient } from '../support/sse-client.js';
import { testRedis } from '../support/databases.js';
import { mastersOf, type RedisClient } from '../../src/storage/redis/connections.js';
import { runTick } from '../../src/services/period-tick.js';
import { createHash } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { loadLua } from '../../src/storage/redis/scripts.js';

/**
 * Event streams over real HTTP against a real Laurel (web and workers in this process,
 * real Postgres and Redis; `npm run test:cluster` runs it on a Redis Cluster, with sharded
 * channels). What a stream says is compared with values written here by hand.
 */
let h: Harness;
let redis: RedisClient;
const open: SseClient[] = [];

beforeAll(async () => {
  h = await createHarness({ env: { STREAM_KEEPALIVE_MS: '200' } });
  redis = testRedis();
  await h.api('PUT', '/v1/boards/live', { aggregation: 'sum', period: 'all' });
  await h.postEvents([
    { board: 'live', member: 'ann', value: 10, idempotencyKey: 'l-1' },
    { board: 'live', member: 'bob', value: 20, idempotencyKey: 'l-2' },
    { board: 'live', member: 'cid', value: 5, idempotencyKey: 'l-3' },
  ]);
});

afterAll(async () => {
  for (const c of open) c.close();
  await Promise.all(open.map((c) => c.ended));
  redis?.disconnect();
  await h?.close();
});

async function stream(path: string, key: string | null = ADMIN_KEY): Promise<SseClient> {
  const client = await openSse(h.baseUrl + path, key);
  open.push(client);
  return client;
}

/** Subscribers of a sharded channel, asked of every master (each counts its own shard). */
async function subscribers(channel: string): Promise<number> {
  let n = 0;
  for (const master of mastersOf(redis)) {
    const reply = (await master.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
    n += Number(reply[1]);
  }
  return n;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} never happened`);
}

const entries = (m: { data: { entries: Array<{ rank: number; member: string; score: number }> } }) =>
  m.data.entries.map((e) => [e.rank, e.member, e.score]);

/**
 * The MONITOR lines of every master that contain `needle`, read off a plain socket: the
 * server is shared, and a parser of whole lines cannot trip on other clients' commands.
 */
async function monitorLines(needle: string): Promise<{ lines: string[]; stop(): void }> {
  const lines: string[] = [];
  const sockets = await Promise.all(
    mastersOf(redis).map(
      (m) =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(m.options.port!, m.options.host);
          let rest = '';
          socket.setEncoding('utf8');
          socket.on('error', reject);
          socket.on('data', (chunk: string) => {
            const parts = (rest + chunk).split('\r\n');
            rest = parts.pop()!;
            for (const line of parts) {
              if (line === '+OK') resolve(socket);
              else if (line.includes(needle)) lines.push(line);
            }
          });
          socket.write('MONITOR\r\n');
        }),
    ),
  );
  return { lines, stop: () => sockets.forEach((s) => s.destroy()) };
}

/** A metric of this process (a histogram's `_count` by its full name), summed over the labels given. */
async function metric(name: string, labels: Record<string, string> = {}): Promise<number> {
  const family = h.ctx.metrics.registry.getSingleMetric(name.replace(/_count$/, ''));
  const { values } = await family!.get();
  return values
    .filter(
      (v) =>
        ((v as { metricName?: string }).metricName ?? name) === name &&
        Object.entries(labels).every(([k, want]) => v.labels[k] === want),
    )
    .reduce((sum, v) => sum + v.value, 0);
}

describe('stream routes', () => {
  it('refuse without a key, and name the bad field or the unknown scope before streaming', async () => {
    expect((await h.api('GET', '/v1/boards/live/standings/ann/stream', undefined, null)).status).toBe(401);
    const limit = await h.api('GET', '/v1/boards/live/standings/stream?limit=51');
    expect(limit.status).toBe(400);
    expect(JSON.stringify(limit.body)).toContain('limit');
    expect((await h.api('GET', '/v1/boards/nope/standings/stream')).status).toBe(404);
    expect((await h.api('GET', '/v1/boards/live/standings/ann/stream?category=nope')).status).toBe(404);
    // Ordinary routes of the one pipeline, refused as every route is: a keyless write 401, another method 405.
    expect((await h.api('POST', '/v1/boards/live/standings/stream', {}, null)).status).toBe(401);
    const post = await fetch(`${h.baseUrl}/v1/boards/live/standings/ann/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(await post.json()).toMatchObject({ error: 'method_not_allowed' });
  });

  it('send the current standing first, then a change within 1.5 s of it becoming visible', async () => {
    const member = await stream('/v1/boards/live/standings/ann/stream?period=all');
    const top = await stream('/v1/boards/live/standings/stream?period=all&limit=2');
    expect(member.status).toBe(200);
    expect(member.contentType).toContain('text/event-stream');
    const first = await member.next();
    expect(first.event).toBe('standing');
    expect(first.data).toMatchObject({ board: 'live', member: 'ann', rank: 2, score: 10, total: 3, source: 'cache' });
    expect(first.data.period).toMatchObject({ key: 'all', state: 'open' });
    const firstTop = await top.next();
    expect(firstTop.event).toBe('top');
    expect(entries(firstTop)).toEqual([
      [1, 'bob', 20],
      [2, 'ann', 10],
    ]);
    expect(firstTop.data).toMatchObject({ total: 3, limit: 2 });

    await h.postEvents([{ board: 'live', member: 'ann', value: 15, idempotencyKey: 'l-4' }]);
    const visible = Date.now();
    const moved = await member.next();
    const seenAfter = Date.now() - visible;
    expect(moved.event).toBe('standing');
    expect(moved.data).toMatchObject({ rank: 1, score: 25, total: 3 });
    expect(seenAfter).toBeLessThan(1500);
    expect(entries(await top.next())).toEqual([
      [1, 'ann', 25],
      [2, 'bob', 20],
    ]);
  });

  it('say nothing to a stream whose member did not move, and keep it alive with comments', async () => {
    const cid = await stream('/v1/boards/live/standings/cid/stream?period=all');
    const ann = await stream('/v1/boards/live/standings/ann/stream?period=all');
    expect((await cid.next()).data).toMatchObject({ rank: 3, score: 5 });
    expect((await ann.next()).data).toMatchObject({ rank: 1, score: 25 });
    // ann gains points but stays first; bob overtakes nobody: only bob's score changed.
    await h.postEvents([{ board: 'live', member: 'bob', value: 1, idempotencyKey: 'l-5' }]);
    await h.postEvents([{ board: 'live', member: 'cid', value: 100, idempotencyKey: 'l-6' }]);
    // The next thing ann's stream says is its rank change from cid's jump, not bob's point.
    expect((await ann.next()).data).toMatchObject({ rank: 2, score: 25 });
    expect((await cid.next()).data).toMatchObject({ rank: 1, score: 105 });
    expect(await cid.comment((c) => c === 'keepalive')).toBe('keepalive');
  });

  it('subscribe once per watched period and drop the subscription when its last stream leaves', async () => {
    await h.api('PUT', '/v1/boards/solo', { aggregation: 'best', period: 'all' });
    await h.postEvents([{ board: 'solo', member: 'ann', value: 3, idempotencyKey: 's-1' }]);
    const channel = h.ctx.leaderboard.keys.changes('solo', 'all');
    const a = await stream('/v1/boards/solo/standings/ann/stream?period=all');
    const b = await stream('/v1/boards/solo/standings/stream?period=all');
    await a.next();
    await b.next();
    expect(await subscribers(channel)).toBe(1);
    a.close();
    await a.ended;
    // One stream still watches the period.
    await h.postEvents([{ board: 'solo', member: 'ann', value: 9, idempotencyKey: 's-2' }]);
    expect(entries(await b.next())).toEqual([[1, 'ann', 9]]);
    expect(await subscribers(channel)).toBe(1);
    b.close();
    await b.ended;
    await eventually(async () => (await subscribers(channel)) === 0, 'unsubscribe after the last stream left');
    const metrics = await h.ctx.metrics.registry.getSingleMetricAsString('laurel_stream_subscriptions');
    expect(metrics).toMatch(/laurel_stream_subscriptions \d+/);
  });

  it('count open streams, messages and push lag, read a scope once for all its streams, and forget a stream that left', async () => {
    const MEMBERS = 20;
    await h.api('PUT', '/v1/boards/fan', { aggregation: 'sum', period: 'all' });
    await h.postEvents(
      Array.from({ length: MEMBERS }, (_, i) => ({
        board: 'fan',
        member: `f${i}`,
        value: i + 1,
        idempotencyKey: `f-${i}`,
      })),
    );
    const openBefore = await metric('laurel_streams_open', { kind: 'member' });
    const sentBefore = await metric('laurel_stream_messages_total', { event: 'standing' });
    const streams = await Promise.all(
      Array.from({ length: MEMBERS }, (_, i) => stream(`/v1/boards/fan/standings/f${i}/stream?period=all`)),
    );
    for (const s of streams) expect((await s.next()).event).toBe('standing');
    expect(await metric('laurel_streams_open', { kind: 'member' })).toBe(openBefore + MEMBERS);
    expect(await metric('laurel_stream_messages_total', { event: 'standing' })).toBe(sentBefore + MEMBERS);

    // Every watch script call on the scope, seen by Redis itself (MONITOR, other clients' commands skipped).
    const watchSha = createHash('sha1').update(loadLua('watch.lua')).digest('hex');
    const reads = await monitorLines(
      `"evalsha" "${watchSha}" "3" "${h.ctx.leaderboard.keys.scope('fan', 'all', 'all')}"`,
    );
    const lagBefore = await metric('laurel_stream_push_lag_seconds_count');
    // f0 goes from last to first: every member's rank changes.
    await h.postEvents([{ board: 'fan', member: 'f0', value: 1000, idempotencyKey: 'f-top' }]);
    expect((await streams[0]!.next()).data).toMatchObject({ member: 'f0', rank: 1 });
    for (const s of streams.slice(1)) expect((await s.next()).data.rank).toBeGreaterThan(1);
    await eventually(async () => reads.lines.length > 0, 'a watch call seen by MONITOR');
    reads.stop();
    // One call answers all twenty streams (a second only if the 15 s re-read fell in the window).
    expect(reads.lines.length).toBeLessThanOrEqual(2);
    for (const line of reads.lines)
      expect([...line.matchAll(/"(f\d+)"/g)].map((m) => m[1]).sort()).toEqual(
        Array.from({ length: MEMBERS }, (_, i) => `f${i}`).sort(),
      );
    expect(await metric('laurel_stream_push_lag_seconds_count')).toBe(lagBefore + MEMBERS);
    expect(await metric('laurel_stream_messages_total', { event: 'standing' })).toBe(sentBefore + 2 * MEMBERS);

    for (const s of streams) s.close();
    await Promise.all(streams.map((s) => s.ended));
    await eventually(
      async () => (await metric('laurel_streams_open', { kind: 'member' })) === openBefore,
      'the open-streams gauge back down',
    );
    await eventually(
      async () => (await subscribers(h.ctx.leaderboard.keys.changes('fan', 'all'))) === 0,
      'unsubscribe once every stream left',
    );
  });

  it('send the final state and `closed` when the period closes, then end; a closed period streams the same at once', async () => {
    h.clock.set('2026-12-02T10:00:00Z');
    await h.api('PUT', '/v1/boards/daily', { aggregation: 'sum', period: 'day', graceSeconds: 0 });
    await h.postEvents([
      { board: 'daily', member: 'ann', value: 4, idempotencyKey: 'd-1' },
      { board: 'daily', member: 'bob', value: 7, idempotencyKey: 'd-2' },
    ]);
    const s = await stream('/v1/boards/daily/standings/ann/stream?period=2026-12-02');
    expect((await s.next()).data).toMatchObject({ rank: 2, score: 4, period: { key: '2026-12-02', state: 'open' } });
    h.clock.set('2026-12-03T00:00:01Z');
    expect((await runTick(h.ctx)).closed).toContain('daily/2026-12-02');
    const final = await s.next();
    expect(final.event).toBe('standing');
    expect(final.data).toMatchObject({ rank: 2, score: 4, period: { key: '2026-12-02', state: 'closed' } });
    expect((await s.next()).event).toBe('closed');
    await s.ended;

    const late = await stream('/v1/boards/daily/standings/stream?period=2026-12-02');
    const top = await late.next();
    expect(top.event).toBe('top');
    expect(entries(top)).toEqual([
      [1, 'bob', 7],
      [2, 'ann', 4],
    ]);
    expect((await late.next()).event).toBe('closed');
    await late.ended;
  });
});
