/**
 * npm run bench: ingest, queries and rebuild of Laurel beside the raw limit and a naive
 * design, in one run on the local Postgres and Redis. Writes bench/results/latest.json and
 * bench/results/latest.md. Never part of the tests.
 */
import { measureEntriesReads } from './entries-reads.js';
import { createLaurelClient } from '../clients/typescript/src/index.js';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { Redis } from 'ioredis';
import { Queue, Worker } from 'bullmq';
import { migrateDatabase } from '../src/storage/postgres/migrator.js';
import { keysOfPrefix, unlinkMatching } from '../src/storage/redis/maintenance.js';
import { stateBuckets } from '../src/storage/redis/member-state.js';
import { loadLua } from '../src/storage/redis/scripts.js';
import { realtimePart } from './realtime.js';
import {
  ROOT,
  closedLoop,
  openLoopHttp,
  histogramQuantile,
  http,
  httpPosts,
  openLoop,
  parseHistogram,
  peakRssMiB,
  round,
  buildLaurel,
  startProcess,
  startQueueRedis,
  stopProcess,
  waitFor,
} from './support.js';
import { measureCpu, perThousand, processTree, type CpuParts } from './cpu.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** The leaderboard Redis (volatile, as it may be); the queue Redis is the bench's own (startQueueRedis). */
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const QUICK = process.env.BENCH_QUICK === '1';
/**
 * BENCH_ONLY=ingest, BENCH_ONLY=single (one- and ten-event requests only), BENCH_ONLY=big
 * (rebuild + queries), BENCH_ONLY=rebuild (the big rebuild, its raw limit and Redis bytes) or BENCH_ONLY=queries (the queries on a board seeded through intake,
 * no rebuild measured; BENCH_MEMBERS of a few ten thousand keeps the seed short): one part, printed, results not written. BENCH_ONLY=realtime: the
 * streams part, its section replaced in latest.json.
 */
const ONLY = process.env.BENCH_ONLY;
/** Members of the big board (BENCH_MEMBERS: a smaller board for a check on a shared machine). */
const BIG = Number(process.env.BENCH_MEMBERS ?? (QUICK ? 100_000 : 1_000_000));
const ADMIN_KEY = randomBytes(24).toString('hex');
const tag = `bench${Date.now().toString(36)}`;
const dbUrl = (() => {
  const u = new URL(ADMIN_URL);
  u.pathname = `/laurel_${tag}`;
  return u.toString();
})();
/** Web processes (the cluster module; WEB_PROCESSES of src/bin/web.ts). */
const WEB_PROCESSES = Number(process.env.BENCH_WEB_PROCESSES ?? 1);
const WEB_PORT = 21000 + (process.pid % 5000);
const WORKER_METRICS_PORT = WEB_PORT + 1;
const QUEUE_REDIS_PORT = WEB_PORT + 4;
const env = {
  DATABASE_URL: dbUrl,
  // Set once the bench's queue Redis is up (main).
  REDIS_URL: '',
  LEADERBOARD_REDIS_URL: REDIS_URL,
  ADMIN_API_KEY: ADMIN_KEY,
  REDIS_PREFIX: tag,
  PORT: String(WEB_PORT),
  METRICS_PORT: String(WORKER_METRICS_PORT),
  WEB_PROCESSES: String(WEB_PROCESSES),
  // The production default: access logs are written (to /dev/null here), so their cost counts.
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
  // The benchmark drives thousands of requests a second with one key: no budget applies.
  RATE_LIMIT_PER_KEY: '0',
  RATE_LIMIT_PER_IP: '0',
  // The open-loop runs offer more than a 2-core machine serves: measured without shedding
  // (INTAKE_MAX_IN_FLIGHT), so the figures are the answer times of every request.
  INTAKE_MAX_IN_FLIGHT: '0',
};
const base = `http://127.0.0.1:${WEB_PORT}`;
const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
const db = new pg.Pool({ connectionString: dbUrl, max: 8 });
// The final DROP DATABASE ... WITH (FORCE) ends any connection still open; that is expected.
db.on('error', () => undefined);
const redis = new Redis(REDIS_URL);
const log = (line: string) => process.stdout.write(`${line}\n`);

/** Setup (boards, members, rebuilds) goes through the generated client. */
const laurel = createLaurelClient({ baseUrl: base, apiKey: ADMIN_KEY });

/** The measured intake load stays a bare fetch: no client-side work is counted as Laurel's. */
async function postEvents(body: unknown) {
  const res = await fetch(`${base}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`POST /v1/events: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : null;
}

let queueRedis: Awaited<ReturnType<typeof startQueueRedis>> | undefined;
let queueClient: Redis | undefined;
let scoreQueue: Queue | undefined;
async function drained() {
  const c = await scoreQueue!.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
  return (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0) === 0;
}

let web: ChildProcess | undefined;
let worker: ChildProcess | undefined;
async function startWorker(concurrency: number) {
  if (worker) await stopProcess(worker);
  worker = startProcess('src/bin/worker.ts', { ...env, WORKER_CONCURRENCY: String(concurrency) });
  await waitFor(async () => (await fetch(`http://127.0.0.1:${WORKER_METRICS_PORT}/healthz`)).ok, 30_000, 'worker');
}

let seq = 0;
function events(board: string, n: number, members: number) {
  return Array.from({ length: n }, () => {
    seq += 1;
    return { board, member: `m${seq % members}`, value: seq % 1000, idempotencyKey: `${tag}-${seq}` };
  });
}

/** End to end: HTTP -> queue -> Postgres -> Redis, until every event is visible. */
async function ingest(batch: number, concurrency: number) {
  await startWorker(concurrency);
  const total = batch === 1 ? 3000 : 30_000;
  const requests = Math.ceil(total / batch);
  const started = performance.now();
  let next = 0;
  const { cpuMs } = await measureCpu(ingestParts(), async () => {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < requests) {
          next += 1;
          const list = events('ingest', batch, 50_000);
          await postEvents(batch === 1 ? list[0] : { events: list });
        }
      }),
    );
    await waitFor(drained, 600_000, 'ingest to drain');
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    batch,
    concurrency,
    events: requests * batch,
    seconds: round(seconds),
    eventsPerSec: round((requests * batch) / seconds, 0),
    cpuMsPerThousand: perThousand(cpuMs, requests * batch),
  };
}

/**
 * What an ingest run costs each process taking part: the web and worker processes, the
 * Postgres backends of the bench's database, both Redis servers (the load generator, this
 * process, is left out).
 */
function ingestParts(): CpuParts {
  return {
    processes: { web: () => processTree(web!.pid!), worker: () => (worker?.pid ? [worker.pid] : []) },
    postgres: { pool: admin, database: `laurel_${tag}` },
    redis: { queueRedis: queueClient!, leaderboardRedis: redis },
  };
}

/** The worker's received -> projected histogram (laurel_event_visible_lag_seconds). */
async function lagHistogram() {
  const text = await (
    await fetch(`http://127.0.0.1:${WORKER_METRICS_PORT}/metrics`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    })
  ).text();
  return parseHistogram(text, 'laurel_event_visible_lag_seconds');
}

/** p50 / p99 of the lag of the events made visible while `load` ran (and drained). */
async function lagDuring(load: () => Promise<unknown>) {
  const before = await lagHistogram();
  await load();
  await waitFor(drained, 300_000, 'lag run to drain');
  const after = await lagHistogram();
  const delta = after.map((b, i) => ({ le: b.le, count: b.count - (before[i]?.count ?? 0) }));
  return {
    p50Ms: round(histogramQuantile(delta, 0.5) * 1000, 1),
    p99Ms: round(histogramQuantile(delta, 0.99) * 1000, 1),
  };
}

/** Lag at a fixed arrival rate of 100-event batches (open loop). */
async function lagAtRate(rate: number, concurrency: number) {
  await startWorker(concurrency);
  const perRequest = 100;
  const lag = await lagDuring(() =>
    openLoop(10, rate / perRequest, async () => {
      await postEvents({ events: events('lag', perRequest, 20_000) });
    }),
  );
  return { rate, ...lag };
}

/**
 * One-event requests at a fixed rate (open loop, keep-alive clients, as many as the rate
 * needs): the intake's answer times and the event-to-visible lag.
 */
async function singleLagAtRate(rate: number, concurrency: number) {
  await startWorker(concurrency);
  let answers = { p50Ms: 0, p99Ms: 0 };
  const lag = await lagDuring(async () => {
    answers = await openLoopHttp({
      url: base,
      paths: ['/v1/events'],
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      seconds: 5,
      rate,
      body: () => JSON.stringify(events('lag', 1, 20_000)[0]),
    });
  });
  return { rate, ...lag, answerP50Ms: answers.p50Ms, answerP99Ms: answers.p99Ms };
}

/**
 * One- or ten-event requests from `clients` HTTP clients at once (autocannon), end to end
 * until every event is visible: what game servers that post each score as it happens cost.
 */
async function ingestByClients(batch: number, clients: number, concurrency: number) {
  await startWorker(concurrency);
  const requests = QUICK ? 2000 : 6000;
  const started = performance.now();
  const { result: answers, cpuMs } = await measureCpu(ingestParts(), async () => {
    const out = await httpPosts({
      url: base,
      path: '/v1/events',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      connections: clients,
      amount: requests,
      body: () =>
        JSON.stringify(batch === 1 ? events('ingest', 1, 50_000)[0] : { events: events('ingest', batch, 50_000) }),
    });
    await waitFor(drained, 600_000, 'ingest to drain');
    return out;
  });
  const seconds = (performance.now() - started) / 1000;
  const accepted = (requests - answers.refused) * batch;
  return {
    batch,
    clients,
    concurrency,
    events: accepted,
    refused503: answers.refused,
    seconds: round(seconds),
    eventsPerSec: round(accepted / seconds, 0),
    requestsPerSec: answers.rps,
    cpuMsPerThousand: perThousand(cpuMs, accepted),
  };
}

/** The raw limit: the same writes straight into Postgres (1000 rows a statement) and Redis (1000 a pipeline). */
async function rawIngest(n: number) {
  await db.query('CREATE TABLE IF NOT EXISTS bench_raw (key text PRIMARY KEY, member text, value bigint)');
  const started = performance.now();
  // The client is this process: its CPU counts, with Postgres' and Redis'.
  const { cpuMs } = await measureCpu(
    {
      processes: {},
      postgres: { pool: admin, database: `laurel_${tag}` },
      redis: { leaderboardRedis: redis },
      self: 'rawClient',
    },
    async () => {
      const list = events('raw', n, 50_000);
      for (let i = 0; i < n; i += 1000) {
        const chunk = list.slice(i, i + 1000);
        await db.query('INSERT INTO bench_raw SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])', [
          chunk.map((e) => e.idempotencyKey),
          chunk.map((e) => e.member),
          chunk.map((e) => e.value),
        ]);
        const p = redis.pipeline();
        for (const e of chunk) p.zadd(`${tag}:raw`, e.value, e.member);
        await p.exec();
      }
    },
  );
  const seconds = (performance.now() - started) / 1000;
  return { eventsPerSec: round(n / seconds, 0), cpuMsPerThousand: perThousand(cpuMs, n) };
}

/** The naive design: one job per event, one INSERT and one ZINCRBY per job. */
async function naiveIngest(n: number) {
  await db.query('CREATE TABLE IF NOT EXISTS bench_naive (key text PRIMARY KEY, member text, value bigint)');
  // On the same queue Redis as Laurel's (AOF, appendfsync always): the comparison stays fair.
  const connection = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue('naive', { connection, prefix: `{${tag}:naive}` });
  const w = new Worker(
    'naive',
    async (job) => {
      await db.query('INSERT INTO bench_naive VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
        job.data.key,
        job.data.member,
        job.data.value,
      ]);
      await redis.zincrby(`${tag}:naive`, job.data.value, job.data.member);
    },
    { connection, prefix: `{${tag}:naive}`, concurrency: 16 },
  );
  const list = events('naive', n, 50_000);
  const started = performance.now();
  for (let i = 0; i < n; i += 1000) {
    await queue.addBulk(
      list.slice(i, i + 1000).map((e) => ({
        name: 'e',
        data: { key: e.idempotencyKey, member: e.member, value: e.value },
        opts: { removeOnComplete: true },
      })),
    );
  }
  await waitFor(
    async () =>
      (await queue.getJobCounts('waiting', 'active')).waiting === 0 &&
      (await queue.getJobCounts('active')).active === 0,
    600_000,
    'naive',
  );
  const seconds = (performance.now() - started) / 1000;
  await w.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return round(n / seconds, 0);
}

/** An n-member board written straight into Postgres, then rebuilt into Redis by Laurel. */
async function seedBoard(board: string, n: number) {
  await laurel.putBoard({
    params: { path: { boardId: board } },
    body: { aggregation: 'best', tieBreak: 'first', period: 'all' },
  });
  await db.query(
    "INSERT INTO periods (board_id, key, starts_at) VALUES ($1, 'all', '2000-01-01') ON CONFLICT DO NOTHING",
    [board],
  );
  await db.query(`INSERT INTO members (id) SELECT 'u' || g FROM generate_series(1, ${n}) g ON CONFLICT DO NOTHING`);
  await db.query(
    `INSERT INTO member_aggregates (board_id, period_key, category, member_id, value, reached_at, last_key, event_count)
     SELECT $1, 'all', 'all', 'u' || g, (g::bigint * 7919) % 1000000, timestamptz '2026-01-01' + make_interval(secs => g % 86400), 'k' || g, 1
       FROM generate_series(1, ${n}) g`,
    [board],
  );
  // What autovacuum does soon after a bulk insert; it also sets the visibility map, which the
  // fallback's index-only counts rely on.
  await db.query('VACUUM (ANALYZE) member_aggregates');
}

async function rebuild(board: string) {
  await startWorker(4); // a fresh process, so its peak RSS is the rebuild's
  const idleRssMiB = peakRssMiB(worker!.pid!);
  const started = performance.now();
  const { rebuildId } = await laurel.requestRebuild({ body: { board } });
  const state = async () => (await laurel.getRebuild({ params: { path: { rebuildId } } })).state;
  await waitFor(async () => (await state()) === 'completed', 1_800_000, 'rebuild');
  return {
    seconds: round((performance.now() - started) / 1000),
    workerIdleRssMiB: idleRssMiB,
    workerPeakRssMiB: peakRssMiB(worker!.pid!),
  };
}

/** Raw limit of a rebuild (bench/raw-rebuild.ts), in a process of its own for its peak RSS. */
async function rawRebuild(board: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/raw-rebuild.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      RAW_DATABASE_URL: dbUrl,
      RAW_REDIS_URL: REDIS_URL,
      RAW_BOARD: board,
      RAW_KEY: `${tag}:raw${board}`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  let peak = 0;
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, peakRssMiB(child.pid!));
    } catch {
      // the process has just exited
    }
  }, 50);
  const code = await new Promise((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`raw rebuild exited with ${String(code)}`);
  return { seconds: round((JSON.parse(out) as { seconds: number }).seconds), peakRssMiB: peak };
}

async function queries() {
  const member = (i: number) => `u${1 + ((i * 104729) % BIG)}`;
  const me = member(7);
  await laurel.putFollowing({
    params: { path: { memberId: me } },
    body: { memberIds: Array.from({ length: 200 }, (_, i) => member(1000 + i * 13)) },
  });
  const auth = { authorization: `Bearer ${ADMIN_KEY}` };
  const load = (paths: string[], connections: number) =>
    http({ url: base, paths, headers: auth, seconds: 5, connections });
  const rankPaths = Array.from({ length: 1000 }, (_, i) => `/v1/boards/big/standings/${member(i)}?period=all`);
  const aroundPaths = Array.from(
    { length: 1000 },
    (_, i) => `/v1/boards/big/standings/${member(i)}/around?period=all&radius=5`,
  );
  const zset = `${tag}:lb:{big|all}:z:all:world`;
  const state = `${tag}:lb:{big|all}:st:all`;
  // The bare limit: the same answer (a member's rank) with one plain Redis command from Node.
  const sample = Array.from({ length: 1000 }, (_, i) => member(i));
  const picked = (await redis.eval(
    loadLua('pick.lua'),
    3,
    zset,
    state,
    `${tag}:lb:{big|all}:ok`,
    'all',
    ...sample,
  )) as [number, string[]];
  const entryOf = new Map<string, string>();
  for (let i = 0; i < picked[1].length; i += 3) entryOf.set(picked[1][i]!, picked[1][i + 1]!);
  const entries = sample.map((m) => entryOf.get(m)!);
  const bare = (i: number) => redis.zrank(zset, entries[i % 1000]!).then(() => undefined);
  // The bare limit of "around": the member's index, then the range about it (two round trips).
  const bareAround = async (i: number) => {
    const index = (await redis.zrank(zset, entries[i % 1000]!)) ?? 0;
    await redis.zrange(zset, String(Math.max(0, index - 5)), String(index + 5), 'WITHSCORES');
  };
  // The floors: bare node:http, then a minimal Express 5 app, each + one ZRANK per request, in a process of its own.
  const floorOf = async (framework: 'node' | 'express') => {
    const port = WEB_PORT + 2;
    const server = startProcess('bench/bare-http.ts', {
      BARE_PORT: String(port),
      BARE_REDIS_URL: REDIS_URL,
      BARE_KEY: zset,
      BARE_ENTRIES: entries.join(','),
      BARE_FRAMEWORK: framework,
    });
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/1`)).ok, 30_000, `${framework} floor`);
      const paths = Array.from({ length: 1000 }, (_, i) => `/${i}`);
      const url = `http://127.0.0.1:${port}`;
      const closed = await http({ url, paths, headers: {}, seconds: 5, connections: 32 });
      return {
        closed,
        at2000:
          framework === 'node' ? await openLoopHttp({ url, paths, headers: {}, seconds: 5, rate: 2000 }) : undefined,
      };
    } finally {
      await stopProcess(server);
    }
  };
  // Member rank between the two floors: on a shared machine the load moves within a minute.
  const floor = await floorOf('node');
  const rank = await load(rankPaths, 32);
  const expressFloor = await floorOf('express');
  const out = {
    bareHttp: floor.closed,
    bareHttpAt2000: floor.at2000!,
    expressFloor: expressFloor.closed,
    top50: await load(['/v1/boards/big/standings?period=all&limit=50'], 32),
    rank,
    bareRank: await closedLoop(5, 32, bare),
    around: await load(aroundPaths, 32),
    following200: await load([`/v1/boards/big/standings/${me}/following?period=all&limit=201`], 16),
    entries: await measureEntriesReads({
      url: base,
      headers: auth,
      board: 'big',
      period: 'all',
      members: Array.from({ length: 1000 }, (_, i) => member(i)),
      seconds: 5,
      connections: 32,
    }),
    rankAt2000: await openLoopHttp({ url: base, paths: rankPaths, headers: auth, seconds: 5, rate: 2000 }),
    aroundAt2000: await openLoopHttp({ url: base, paths: aroundPaths, headers: auth, seconds: 5, rate: 2000 }),
    bareAt2000: await openLoop(5, 2000, bare),
    bareAroundAt2000: await openLoop(5, 2000, bareAround),
  };
  const redisBytesPerMember = await bytesPerMember('big', BIG);
  const twoWebProcesses = await rankWithTwoWebProcesses(rankPaths);
  // Last: it leaves the big board's Redis copy marked incomplete.
  const fallback = await fallbackReads(rankPaths, aroundPaths);
  return { ...out, redisBytesPerMember, twoWebProcesses, fallback };
}

/**
 * Redis bytes per member of a board's `all` scope: its sorted set, the member state's index
 * and every bucket (MEMORY USAGE counts each key's name and entry too).
 */
async function bytesPerMember(board: string, members: number): Promise<number> {
  const zset = `${tag}:lb:{${board}|all}:z:all:world`;
  const state = `${tag}:lb:{${board}|all}:st:all`;
  const keys = [zset, state];
  for await (const buckets of stateBuckets(redis, state)) keys.push(...buckets);
  // Sampled: the default of 5 samples misjudges a large hash or sorted set.
  const usages = await redis.pipeline(keys.map((key) => ['memory', 'usage', key, 'samples', '0'])).exec();
  return round(usages!.reduce((sum, [, n]) => sum + Number(n ?? 0), 0) / members, 1);
}

/** Member rank with WEB_PROCESSES=2 beside the run's own web side, on a port of its own. */
async function rankWithTwoWebProcesses(rankPaths: string[]) {
  const port = WEB_PORT + 3;
  const two = startProcess('src/bin/web.ts', { ...env, PORT: String(port), WEB_PROCESSES: '2' });
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 30_000, 'two web processes');
    return await http({
      url: `http://127.0.0.1:${port}`,
      paths: rankPaths,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      seconds: 5,
      connections: 32,
    });
  } finally {
    await stopProcess(two);
  }
}

/**
 * Reads the Postgres fallback answers, one client at a time (within FALLBACK_MAX_CONCURRENT):
 * the big board's category marked incomplete in Redis, and no worker left to rebuild it.
 * A read the statement timeout cancels makes the run fail (its 503 is a non-2xx).
 */
async function fallbackReads(rankPaths: string[], aroundPaths: string[]) {
  if (worker) await stopProcess(worker);
  worker = undefined;
  await redis.hdel(`${tag}:lb:{big|all}:ok`, 'all');
  const headers = { authorization: `Bearer ${ADMIN_KEY}` };
  const one = (paths: string[]) => http({ url: base, paths, headers, seconds: 5, connections: 1 });
  const check = (await (await fetch(base + rankPaths[0]!, { headers })).json()) as { source?: string };
  if (check.source !== 'database') throw new Error(`fallback bench read came from ${check.source}`);
  return {
    rank: await one(rankPaths),
    top50: await one(['/v1/boards/big/standings?period=all&limit=50']),
    around: await one(aroundPaths),
  };
}

async function ingestPart() {
  for (const boardId of ['ingest', 'lag'])
    await laurel.putBoard({ params: { path: { boardId } }, body: { aggregation: 'sum', period: 'all' } });
  log('ingest: batch x worker concurrency (8 clients)');
  const grid: Array<Awaited<ReturnType<typeof ingest>>> = [];
  for (const batch of [1, 100, 1000]) {
    for (const concurrency of [1, 4, 16]) {
      const r = await ingest(batch, concurrency);
      log(`  batch ${batch} x ${concurrency}: ${r.eventsPerSec} events/s`);
      grid.push(r);
    }
  }
  const bestOf = (rows: typeof grid) => rows.reduce((a, b) => (b.eventsPerSec > a.eventsPerSec ? b : a));
  const best = bestOf(grid);
  const lag = await lagAtRate(2000, best.concurrency);
  log(`  lag at 2000 events/s: p50 ${lag.p50Ms} ms, p99 ${lag.p99Ms} ms`);
  const workerPeakRssMiB = peakRssMiB(worker!.pid!);
  const single = await singlePart(bestOf(grid.filter((r) => r.batch === 1)).concurrency);
  const rawRun = await rawIngest(30_000);
  const raw = rawRun.eventsPerSec;
  const naive = await naiveIngest(QUICK ? 2000 : 5000);
  log(`  raw limit ${raw} events/s, naive ${naive} events/s`);
  const cpuMsPerThousand = {
    single: single.best.cpuMsPerThousand,
    batch1000: bestOf(grid.filter((r) => r.batch === 1000)).cpuMsPerThousand,
    raw: rawRun.cpuMsPerThousand,
  };
  for (const [name, parts] of Object.entries(cpuMsPerThousand))
    log(`  CPU ms per 1000 events, ${name}: ${JSON.stringify(parts)}`);
  return {
    grid,
    best,
    batch1000: bestOf(grid.filter((r) => r.batch === 1000)),
    batch100: bestOf(grid.filter((r) => r.batch === 100)),
    lag,
    single,
    raw,
    naive,
    cpuMsPerThousand,
    workerPeakRssMiB,
  };
}

/** One- and ten-event requests by HTTP clients at once, then one-event requests at 2000/s. */
async function singlePart(concurrency: number) {
  await laurel.putBoard({ params: { path: { boardId: 'ingest' } }, body: { aggregation: 'sum', period: 'all' } });
  await laurel.putBoard({ params: { path: { boardId: 'lag' } }, body: { aggregation: 'sum', period: 'all' } });
  log(`ingest: one and ten events a request x HTTP clients (worker concurrency ${concurrency})`);
  const clientsGrid: Array<Awaited<ReturnType<typeof ingestByClients>>> = [];
  for (const batch of [1, 10]) {
    for (const clients of [8, 64, 256]) {
      const r = await ingestByClients(batch, clients, concurrency);
      log(
        `  ${batch} event(s) x ${clients} clients: ${r.eventsPerSec} events/s (answers ${r.requestsPerSec} req/s, ${r.refused503} refused 503)`,
      );
      clientsGrid.push(r);
    }
  }
  const best = clientsGrid.filter((r) => r.batch === 1).reduce((a, b) => (b.eventsPerSec > a.eventsPerSec ? b : a));
  const lag = await singleLagAtRate(2000, concurrency);
  log(
    `  one-event requests at 2000/s: lag p50 ${lag.p50Ms} ms, p99 ${lag.p99Ms} ms; answers p50 ${lag.answerP50Ms} ms, p99 ${lag.answerP99Ms} ms`,
  );
  return { clientsGrid, best, lag };
}

async function bigPart() {
  const small = Math.round(BIG / 10);
  log(`rebuild of a ${small}- and a ${BIG}-member board (memory flat in size), queries on the larger`);
  await seedBoard('small', small);
  const rebuildSmall = await rebuild('small');
  await seedBoard('big', BIG);
  const rebuildBig = await rebuild('big');
  const raw = await rawRebuild('big');
  log(
    `  rebuild ${small}: ${rebuildSmall.seconds}s, worker peak ${rebuildSmall.workerPeakRssMiB} MiB (idle ${rebuildSmall.workerIdleRssMiB})`,
  );
  log(
    `  rebuild ${BIG}: ${rebuildBig.seconds}s, worker peak ${rebuildBig.workerPeakRssMiB} MiB (idle ${rebuildBig.workerIdleRssMiB}); raw ${raw.seconds}s, peak ${raw.peakRssMiB} MiB`,
  );
  const q = await queries();
  // The web side's metrics answer for every web process (the cluster primary aggregates them).
  const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const served =
    /laurel_http_request_duration_seconds_count\{[^}]*route="\/v1\/boards\/:boardId\/standings\/:memberId"[^}]*\} (\d+)/.exec(
      await metrics.text(),
    );
  log(`  /metrics: ${metrics.status}, member-rank requests counted ${served?.[1] ?? 'none'}`);
  log(`  Redis bytes per member (sorted set + member state): ${q.redisBytesPerMember}`);
  log(`  rank ${q.rank.rps} req/s p99 ${q.rank.p99Ms} ms; bare ${q.bareRank.rps} req/s p99 ${q.bareRank.p99Ms} ms`);
  log(
    `  at 2000 req/s p99: rank ${q.rankAt2000.p99Ms} ms, around ${q.aroundAt2000.p99Ms} ms; bare rank ${q.bareAt2000.p99Ms} ms, bare around ${q.bareAroundAt2000.p99Ms} ms`,
  );
  log(`  HTTP floor (node:http + ZRANK): ${q.bareHttp.rps} req/s, p99 at 2000 req/s ${q.bareHttpAt2000.p99Ms} ms`);
  log(
    `  Express floor (minimal Express 5 + ZRANK): ${q.expressFloor.rps} req/s; rank with 2 web processes ${q.twoWebProcesses.rps} req/s`,
  );
  log(`  around ${q.around.rps} req/s, top-50 ${q.top50.rps} req/s, following ${q.following200.rps} req/s`);
  log(`  ?members= (100) ${q.entries.members100Rps} req/s, page with ?member= ${q.entries.memberPageRps} req/s`);
  log(
    `  goals ${q.entries.goalsRps} req/s, cutoffs (5 ranks, 5 percents) ${q.entries.cutoffsRps} req/s; rank beside them ${q.entries.memberRankRps} req/s`,
  );
  const fb = q.fallback;
  log(
    `  fallback p50 / p99 ms: rank ${fb.rank.p50Ms} / ${fb.rank.p99Ms}, top-50 ${fb.top50.p50Ms} / ${fb.top50.p99Ms}, around ${fb.around.p50Ms} / ${fb.around.p99Ms}`,
  );
  return { small, rebuildSmall, rebuildBig, raw, q };
}

/** The 1M-member rebuild against its raw limit and the Redis bytes it leaves, nothing else. */
async function rebuildPart() {
  // The worker's start-up rebuild (a new Redis prefix) runs first, on a small board.
  await seedBoard('small', 1000);
  await rebuild('small');
  await seedBoard('big', BIG);
  const rebuildBig = await rebuild('big');
  const raw = await rawRebuild('big');
  log(
    `rebuild ${BIG}: ${rebuildBig.seconds}s, raw ${raw.seconds}s = ${round(rebuildBig.seconds / raw.seconds, 2)}x; Redis bytes per member ${await bytesPerMember('big', BIG)}`,
  );
}

/** The queries alone, on a board seeded through intake first; the ratios the targets name. */
async function queriesPart() {
  await laurel.putBoard({
    params: { path: { boardId: 'big' } },
    body: { aggregation: 'best', tieBreak: 'first', period: 'all' },
  });
  await startWorker(4);
  // Through intake and the worker, 1000 events a request: the members the queries ask for.
  for (let from = 1; from <= BIG; from += 1000) {
    const list = Array.from({ length: Math.min(1000, BIG - from + 1) }, (_, i) => ({
      board: 'big',
      member: `u${from + i}`,
      value: ((from + i) * 7919) % 1_000_000,
      idempotencyKey: `${tag}-seed-${from + i}`,
    }));
    await postEvents({ events: list });
  }
  await waitFor(drained, 1_800_000, 'the seed to drain');
  const ranked = await redis.zcard(`${tag}:lb:{big|all}:z:all:world`);
  if (ranked !== BIG) throw new Error(`the rebuild left ${ranked} of ${BIG} members in Redis`);
  const q = await queries();
  const x = (a: number, b: number) => `${round(a / b, 2)}x`;
  log(
    `queries on ${BIG} members, load average ${os
      .loadavg()
      .map((l) => round(l, 2))
      .join(' ')}`,
  );
  log(
    `  rank ${q.rank.rps} req/s = ${x(q.rank.rps, q.bareHttp.rps)} of the node:http floor ${q.bareHttp.rps}, ${x(q.rank.rps, q.expressFloor.rps)} of the Express floor ${q.expressFloor.rps}`,
  );
  log(
    `  rank p99 at 2000 req/s ${q.rankAt2000.p99Ms} ms = ${x(q.rankAt2000.p99Ms, q.bareHttpAt2000.p99Ms)} of the floor's ${q.bareHttpAt2000.p99Ms} ms`,
  );
  log(
    `  around ${q.around.rps} (${x(q.around.rps, q.rank.rps)} of rank), top-50 ${q.top50.rps} (${x(q.top50.rps, q.rank.rps)}), following (200) ${q.following200.rps} (${x(q.following200.rps, q.rank.rps)})`,
  );
  log(`  rank with WEB_PROCESSES=2 ${q.twoWebProcesses.rps} req/s`);
  const e = q.entries;
  log(
    `  goals ${e.goalsRps} (${x(e.goalsRps, e.memberRankRps)}), cutoffs ${e.cutoffsRps} (${x(e.cutoffsRps, e.memberRankRps)}) of rank measured beside them ${e.memberRankRps}; ?members= (100) ${e.members100Rps}, page with ?member= ${e.memberPageRps}`,
  );
}

async function streamsPart() {
  await startWorker(4);
  await laurel.putBoard({ params: { path: { boardId: 'realtime' } }, body: { aggregation: 'sum', period: 'all' } });
  return realtimePart(
    {
      env,
      port: WEB_PORT + 2,
      adminKey: ADMIN_KEY,
      seconds: QUICK ? 10 : 30,
      post: async (list) => void (await postEvents({ events: list })),
    },
    log,
  );
}

async function main() {
  const loadAtStart = os.loadavg();
  await admin.query(`CREATE DATABASE "laurel_${tag}"`);
  await migrateDatabase(dbUrl);
  buildLaurel();
  queueRedis = await startQueueRedis(QUEUE_REDIS_PORT);
  env.REDIS_URL = queueRedis.url;
  queueClient = new Redis(queueRedis.url);
  scoreQueue = new Queue('score-events', { connection: queueClient, prefix: `{${tag}:score-events}` });
  web = startProcess('src/bin/web.ts', env);
  await waitFor(async () => (await fetch(`${base}/readyz`)).ok, 30_000, 'web');
  if (ONLY === 'ingest') return void (await ingestPart());
  if (ONLY === 'single') return void (await singlePart(Number(process.env.BENCH_WORKER_CONCURRENCY ?? 16)));
  if (ONLY === 'big') return void (await bigPart());
  if (ONLY === 'rebuild') return void (await rebuildPart());
  if (ONLY === 'queries') return void (await queriesPart());
  const resultsFile = path.join(ROOT, 'bench/results/latest.json');
  if (ONLY === 'realtime') {
    const realtime = await streamsPart();
    const previous = existsSync(resultsFile)
      ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as Record<string, unknown>)
      : {};
    writeFileSync(
      resultsFile,
      `${JSON.stringify({ ...previous, realtime: { date: new Date().toISOString(), ...realtime } }, null, 2)}\n`,
    );
    return void log(`written: the realtime section of bench/results/latest.json`);
  }
  const ing = await ingestPart();
  const big = await bigPart();
  const realtime = await streamsPart();
  const { grid, best, lag, raw, naive, single } = ing;
  const { q } = big;
  const webPeakRssMiB = peakRssMiB(web.pid!);

  const result = {
    date: new Date().toISOString(),
    quick: QUICK,
    machine: {
      cores: os.cpus().length,
      cpu: os.cpus()[0]?.model ?? 'unknown',
      memoryGiB: round(os.totalmem() / 2 ** 30, 1),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      // Shared with other work: the load average says how busy it was around the run.
      loadAverageAtStart: loadAtStart.map((l) => round(l, 2)),
      loadAverageAtEnd: os.loadavg().map((l) => round(l, 2)),
    },
    processes: { web: WEB_PROCESSES, workerRebuildConcurrency: 4, logLevel: env.LOG_LEVEL },
    ingest: {
      // The best 1000-event figure; `best` names the best of the whole grid.
      eventsPerSec: ing.batch1000.eventsPerSec,
      best: { batch: best.batch, concurrency: best.concurrency },
      batch100EventsPerSec: ing.batch100.eventsPerSec,
      grid,
      single: {
        eventsPerSec: single.best.eventsPerSec,
        best: { clients: single.best.clients, concurrency: single.best.concurrency },
        clientsGrid: single.clientsGrid,
        lagRateRequestsPerSec: single.lag.rate,
        lagP50Ms: single.lag.p50Ms,
        lagP99Ms: single.lag.p99Ms,
        answerP50Ms: single.lag.answerP50Ms,
        answerP99Ms: single.lag.answerP99Ms,
      },
      rawLimitEventsPerSec: raw,
      // CPU ms per 1,000 events of each process taking part (/proc and Redis INFO cpu), and their total.
      cpuMsPerThousand: ing.cpuMsPerThousand,
      naiveEventsPerSec: naive,
      lagP50Ms: lag.p50Ms,
      lagP99Ms: lag.p99Ms,
      lagRateEventsPerSec: 2000,
      webPeakRssMiB,
      workerPeakRssMiB: ing.workerPeakRssMiB,
    },
    query: {
      members: BIG,
      webProcesses: WEB_PROCESSES,
      top50Rps: q.top50.rps,
      top50P99Ms: q.top50.p99Ms,
      rankRps: q.rank.rps,
      bareRankRps: q.bareRank.rps,
      bareHttpRankRps: q.bareHttp.rps,
      expressFloorRps: q.expressFloor.rps,
      twoWebProcessesRankRps: q.twoWebProcesses.rps,
      rankP50Ms: q.rank.p50Ms,
      rankP99Ms: q.rank.p99Ms,
      bareRankP99Ms: q.bareRank.p99Ms,
      aroundRps: q.around.rps,
      aroundP99Ms: q.around.p99Ms,
      following200Rps: q.following200.rps,
      following200P99Ms: q.following200.p99Ms,
      members100Rps: q.entries.members100Rps,
      members100P99Ms: q.entries.members100P99Ms,
      memberPageRps: q.entries.memberPageRps,
      memberPageP99Ms: q.entries.memberPageP99Ms,
      goalsRps: q.entries.goalsRps,
      goalsP99Ms: q.entries.goalsP99Ms,
      cutoffsRps: q.entries.cutoffsRps,
      cutoffsP99Ms: q.entries.cutoffsP99Ms,
      atFixedRate: {
        rate: 2000,
        rankP99Ms: q.rankAt2000.p99Ms,
        aroundP99Ms: q.aroundAt2000.p99Ms,
        bareRankP99Ms: q.bareAt2000.p99Ms,
        bareAroundP99Ms: q.bareAroundAt2000.p99Ms,
        bareHttpRankP99Ms: q.bareHttpAt2000.p99Ms,
      },
      webPeakRssMiB,
      redisBytesPerMember: q.redisBytesPerMember,
      fallback: {
        rankP50Ms: q.fallback.rank.p50Ms,
        rankP99Ms: q.fallback.rank.p99Ms,
        top50P50Ms: q.fallback.top50.p50Ms,
        top50P99Ms: q.fallback.top50.p99Ms,
        aroundP50Ms: q.fallback.around.p50Ms,
        aroundP99Ms: q.fallback.around.p99Ms,
      },
    },
    realtime,
    rebuild: {
      members: BIG,
      seconds: big.rebuildBig.seconds,
      rawLimitSeconds: big.raw.seconds,
      workerPeakRssMiB: big.rebuildBig.workerPeakRssMiB,
      workerIdleRssMiB: big.rebuildBig.workerIdleRssMiB,
      rawPeakRssMiB: big.raw.peakRssMiB,
      smaller: {
        members: big.small,
        seconds: big.rebuildSmall.seconds,
        workerPeakRssMiB: big.rebuildSmall.workerPeakRssMiB,
      },
    },
  };
  const ratio = (a: number, b: number) => `${round(a / b, 2)}x`;
  const rb = result.rebuild;
  const batch100 = ing.batch100.eventsPerSec;
  const met = (ok: boolean) => (ok ? 'yes' : 'no');
  const cpu = ing.cpuMsPerThousand;
  const parts = [...new Set(Object.values(cpu).flatMap((c) => Object.keys(c)))].filter((p) => p !== 'total');
  const cpuSplit = [
    `CPU ms per 1,000 events by process (utime + stime from /proc; Redis from INFO cpu; Postgres: the backends of the bench's database):`,
    '',
    `| run | ${parts.join(' | ')} | total |`,
    `|---|${parts.map(() => '---|').join('')}---|`,
    ...Object.entries(cpu).map(
      ([run, c]) =>
        `| ${run} | ${parts.map((p) => (c as Record<string, number | undefined>)[p] ?? '').join(' | ')} | ${c.total} |`,
    ),
  ].join('\n');
  const md = [
    `| measure | Laurel | limit / naive | ratio | target | met |`,
    `|---|---|---|---|---|---|`,
    `| 1000-event requests, events/s (best: ${ing.batch1000.concurrency} jobs at once) | ${ing.batch1000.eventsPerSec} | raw ${raw} | ${ratio(ing.batch1000.eventsPerSec, raw)} of raw | >= 0.25x | ${met(ing.batch1000.eventsPerSec / raw >= 0.25)} |`,
    `| 100-event requests, events/s (best) | ${batch100} | raw ${raw} | ${ratio(batch100, raw)} of raw | >= 0.2x | ${met(batch100 / raw >= 0.2)} |`,
    `| one-event requests, events/s (best: ${single.best.clients} clients) | ${single.best.eventsPerSec} | naive ${naive} | ${ratio(single.best.eventsPerSec, naive)} of naive | >= 2x | ${met(single.best.eventsPerSec / naive >= 2)} |`,
    `| one-event requests at ${single.lag.rate}/s: time to the answer p50 / p99 ms | ${single.lag.answerP50Ms} / ${single.lag.answerP99Ms} | | | p99 <= 50 | ${met(single.lag.answerP99Ms <= 50)} |`,
    `| one-event requests at ${single.lag.rate}/s: event-to-visible lag p50 / p99 ms | ${single.lag.p50Ms} / ${single.lag.p99Ms} | | | p99 <= 100 | ${met(single.lag.p99Ms <= 100)} |`,
    `| CPU ms per 1,000 events, all processes: 1000-event requests / one-event requests | ${cpu.batch1000.total} / ${cpu.single.total} | raw ${cpu.raw.total} | ${ratio(cpu.batch1000.total, cpu.raw.total)} / ${ratio(cpu.single.total, cpu.raw.total)} | 1000-event <= 4x | ${met(cpu.batch1000.total / cpu.raw.total <= 4)} |`,
    `| 1000-event requests vs naive (one job per event), events/s | ${best.eventsPerSec} | naive ${naive} | ${ratio(best.eventsPerSec, naive)} | |`,
    `| event-to-visible lag at 2000 events/s in 100-event requests, p50 / p99 ms | ${lag.p50Ms} / ${lag.p99Ms} | | | |`,
    `| member rank, req/s (32 clients, ${WEB_PROCESSES} web process${WEB_PROCESSES > 1 ? 'es' : ''}) | ${q.rank.rps} | bare ZRANK ${q.bareRank.rps} | ${ratio(q.rank.rps, q.bareRank.rps)} | |`,
    `| rank p99 at 2000 req/s, ms | ${q.rankAt2000.p99Ms} | bare ZRANK ${q.bareAt2000.p99Ms} | ${ratio(q.rankAt2000.p99Ms, q.bareAt2000.p99Ms)} | |`,
    `| around (radius 5) p99 at 2000 req/s, ms | ${q.aroundAt2000.p99Ms} | bare ZRANK ${q.bareAt2000.p99Ms} / ZRANK+ZRANGE ${q.bareAroundAt2000.p99Ms} | ${ratio(q.aroundAt2000.p99Ms, q.bareAt2000.p99Ms)} / ${ratio(q.aroundAt2000.p99Ms, q.bareAroundAt2000.p99Ms)} | |`,
    `| HTTP floor: bare node:http + one ZRANK, req/s / p99 ms at 2000 req/s | ${q.bareHttp.rps} / ${q.bareHttpAt2000.p99Ms} | bare ZRANK ${q.bareRank.rps} / ${q.bareAt2000.p99Ms} | ${ratio(q.bareHttp.rps, q.bareRank.rps)} / ${ratio(q.bareHttpAt2000.p99Ms, q.bareAt2000.p99Ms)} | (reference) |`,
    `| Express floor: minimal Express 5 + one ZRANK, req/s | ${q.expressFloor.rps} | node:http floor ${q.bareHttp.rps} | ${ratio(q.expressFloor.rps, q.bareHttp.rps)} | (reference) |`,
    `| member rank vs the Express floor, req/s | ${q.rank.rps} | ${q.expressFloor.rps} | ${ratio(q.rank.rps, q.expressFloor.rps)} | >= 0.6x |`,
    `| member rank p99 at 2000 req/s vs the node:http floor's, ms | ${q.rankAt2000.p99Ms} | ${q.bareHttpAt2000.p99Ms} | ${ratio(q.rankAt2000.p99Ms, q.bareHttpAt2000.p99Ms)} | <= 3x |`,
    `| around / top-50 / following (200) vs member rank, req/s | ${q.around.rps} / ${q.top50.rps} / ${q.following200.rps} | ${q.rank.rps} | ${ratio(q.around.rps, q.rank.rps)} / ${ratio(q.top50.rps, q.rank.rps)} / ${ratio(q.following200.rps, q.rank.rps)} | >= 0.8x / 0.8x / 0.4x |`,
    `| member rank with WEB_PROCESSES=2, req/s | ${q.twoWebProcesses.rps} | one process ${q.rank.rps} | ${ratio(q.twoWebProcesses.rps, q.rank.rps)} | |`,
    `| Postgres fallback p50 / p99 ms: rank, top-50, around (one client) | ${q.fallback.rank.p50Ms} / ${q.fallback.rank.p99Ms}, ${q.fallback.top50.p50Ms} / ${q.fallback.top50.p99Ms}, ${q.fallback.around.p50Ms} / ${q.fallback.around.p99Ms} | | | rank p50 <= 250, top-50 p50 <= 50 |`,
    `| around req/s / p99 ms (32 clients) | ${q.around.rps} / ${q.around.p99Ms} | | | |`,
    `| top-50 req/s / p99 ms | ${q.top50.rps} / ${q.top50.p99Ms} | | | |`,
    `| following (200) req/s / p99 ms | ${q.following200.rps} / ${q.following200.p99Ms} | | | |`,
    `| ?members= (100 ids) / page with ?member=, req/s (p99 ms) | ${q.entries.members100Rps} (${q.entries.members100P99Ms}) / ${q.entries.memberPageRps} (${q.entries.memberPageP99Ms}) | rank ${q.entries.memberRankRps} | ${ratio(q.entries.members100Rps, q.entries.memberRankRps)} / ${ratio(q.entries.memberPageRps, q.entries.memberRankRps)} | |`,
    `| goals / cutoffs (5 ranks, 5 percents), req/s (p99 ms) | ${q.entries.goalsRps} (${q.entries.goalsP99Ms}) / ${q.entries.cutoffsRps} (${q.entries.cutoffsP99Ms}) | rank ${q.entries.memberRankRps} | ${ratio(q.entries.goalsRps, q.entries.memberRankRps)} / ${ratio(q.entries.cutoffsRps, q.entries.memberRankRps)} | >= 0.8x / 0.8x |`,
    `| rebuild of ${BIG} members, s | ${rb.seconds} | raw ${rb.rawLimitSeconds} | ${ratio(rb.seconds, rb.rawLimitSeconds)} | <= 2x |`,
    `| rebuild peak RSS MiB: ${big.small} / ${BIG} members (worker idle ${rb.workerIdleRssMiB}; raw ${rb.rawPeakRssMiB}) | ${rb.smaller.workerPeakRssMiB} / ${rb.workerPeakRssMiB} | | ${ratio(rb.workerPeakRssMiB, rb.smaller.workerPeakRssMiB)} for 10x members | flat |`,
    `| peak RSS MiB: web / worker (ingest) | ${webPeakRssMiB} / ${ing.workerPeakRssMiB} | | | |`,
    `| Redis bytes per member (sorted set + member state buckets) | ${q.redisBytesPerMember} | | | <= 150 |`,
    `| ${realtime.streams} streams, ${realtime.eventsPerSec} events/s over ${realtime.members} members: push lag p50 / p99 ms | ${realtime.pushLagP50Ms} / ${realtime.pushLagP99Ms} | | | p99 <= 1500 |`,
    `| the same: web process CPU % of a core / peak RSS MiB | ${realtime.webCpuPercent} / ${realtime.webRssMiB} | | | RSS <= 512 |`,
  ].join('\n');
  const dir = path.join(ROOT, 'bench/results');
  writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  const header = `Measured ${result.date}${QUICK ? ' (BENCH_QUICK=1)' : ''} on ${result.machine.cores} cores (${result.machine.cpu}), ${result.machine.memoryGiB} GiB, Node ${process.version}; load average ${result.machine.loadAverageAtStart.join(' ')} at start. ${WEB_PROCESSES} web process${WEB_PROCESSES > 1 ? 'es' : ''}, LOG_LEVEL=${env.LOG_LEVEL}.`;
  writeFileSync(path.join(dir, 'latest.md'), `${header}\n\n${md}\n\n${cpuSplit}\n`);
  log(`\n${md}\n\n${cpuSplit}\n\nwritten: bench/results/latest.json, bench/results/latest.md`);
}

try {
  await main();
} finally {
  if (worker) await stopProcess(worker);
  if (web) await stopProcess(web);
  await scoreQueue?.close().catch(() => undefined);
  queueClient?.disconnect();
  await queueRedis?.stop();
  await unlinkMatching(redis, keysOfPrefix(tag));
  redis.disconnect();
  await db.end();
  await admin.query(`DROP DATABASE IF EXISTS "laurel_${tag}" WITH (FORCE)`).catch(() => undefined);
  await admin.end();
}
