/**
 * The soak (`npm run soak`): a web and a worker process under steady mixed load for
 * SOAK_MINUTES (default 20): one-event and 100-event ingest, reads of every standings
 * route, member streams (SSE) opened and closed all the time, an admin rebuild every few minutes, and a day board whose periods close every
 * three real minutes (a warped clock, LAUREL_CLOCK_SPEED, runs both processes 480x faster;
 * with CLOSED_PERIOD_CACHE_HOURS=12 each closed day also retires and leaves Redis 90 real
 * seconds later). Every 10 s it samples the RSS of both processes, the memory of both Redis
 * servers (private ones, started here, so nothing else is counted), the Postgres
 * connections of its database and the queue lengths; it counts error lines (level error or
 * fatal) and failed requests. At the end it drains the queue, checks that every accepted
 * event is in the ledger, fits a line to each series after the warm-up (to the per-minute
 * minimums for a process's RSS, which swings with its uncollected garbage) and writes
 * bench/results/soak.json with the slopes.
 * Usage: SOAK_MINUTES=3 npm run soak
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { migrateDatabase } from '../src/storage/postgres/migrator.js';
import { SCORE_EVENTS_QUEUE } from '../src/queue/score-events-queue.js';
import { queuePrefix } from '../src/queue/enqueue.js';
import { REBUILD_QUEUE } from '../src/queue/rebuild-queue.js';
import { PERIODS_QUEUE } from '../src/queue/periods-queue.js';
import { WEBHOOKS_QUEUE } from '../src/queue/webhooks-queue.js';
import { freePort } from '../test/support/free-port.js';
import { startPrivateRedis, type PrivateRedis } from '../test/support/redis-server.js';
import { ROOT, round } from './support.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 20);
const CLOCK_SPEED = Number(process.env.SOAK_CLOCK_SPEED ?? 480);
const SAMPLE_EVERY_MS = 10_000;
/** The first samples are the processes warming up (JIT, pools, caches): left out of the fit. */
const WARMUP_MS = Math.min(120_000, (MINUTES * 60_000) / 3);
/** Closed days retire this long (warped) after their close: 12 h is 90 real seconds at 480x. */
const CACHE_HOURS = Number(process.env.SOAK_CACHE_HOURS ?? 12);
const REBUILD_EVERY_MS = Math.min(5 * 60_000, (MINUTES * 60_000) / 3);
const SINGLES_PER_SEC = 10;
const BATCHES_PER_SEC = 1;
const READS_PER_SEC = 20;
/** Member streams kept open at any time, each closed after STREAM_SECONDS and replaced: churn is what a leak of subscriptions needs. */
const STREAMS_OPEN = 50;
const STREAM_SECONDS = 30;
const MEMBERS = 5000;
const REGIONS = ['FR', 'DE', 'US', 'BR', 'JP'];
const ADMIN_KEY = randomBytes(16).toString('hex');
/**
 * A series is flat when its fitted change over the run after the warm-up is within 10% of
 * its mean, or within a floor for series that sit near zero (a queue that is mostly empty).
 */
const FLAT_SHARE = 0.1;
const FLAT_FLOOR: Partial<Record<string, number>> = {
  postgresConnections: 3,
  scoreQueueWaiting: 20,
  rebuildQueueWaiting: 5,
  webhooksQueueWaiting: 20,
};
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Sample {
  atMs: number;
  webRssMiB: number;
  workerRssMiB: number;
  webHeapUsedMiB: number;
  workerHeapUsedMiB: number;
  leaderboardRedisMiB: number;
  queueRedisMiB: number;
  postgresConnections: number;
  scoreQueueWaiting: number;
  rebuildQueueWaiting: number;
  webhooksQueueWaiting: number;
  queueJobsKept: number;
}

const tag = `soak${Date.now().toString(36)}`;
const dbName = `laurel_${tag}`;
const dbUrl = Object.assign(new URL(ADMIN_URL), { pathname: `/${dbName}` }).toString();
const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
const processes: ChildProcess[] = [];
const redises: PrivateRedis[] = [];
const errorLines: string[] = [];
let errorCount = 0;
let warnCount = 0;

/** Starts an entry point and counts its log lines by level; the first error lines are kept for the report. */
function startLaurel(entry: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      let level: string;
      try {
        level = String((JSON.parse(line) as { level?: string }).level ?? '');
      } catch {
        level = 'error'; // not a pino line: a crash trace or the like
      }
      if (level === 'error' || level === 'fatal') {
        errorCount += 1;
        if (errorLines.length < 20) errorLines.push(`${entry}: ${line.slice(0, 400)}`);
      } else if (level === 'warn') warnCount += 1;
    });
  }
  processes.push(child);
  return child;
}

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return round(kb / 1024, 1);
}

async function usedMiB(redis: Redis): Promise<number> {
  return round(Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))![1]) / 1024 / 1024, 2);
}

const GC_FLOOR_SERIES = new Set<string>(['webRssMiB', 'workerRssMiB', 'webHeapUsedMiB', 'workerHeapUsedMiB']);

/** The V8 heap in use, from the process's own metrics (NaN when they do not answer). */
async function heapUsedMiB(url: string, headers: Record<string, string>): Promise<number> {
  const text = await fetch(url, { headers }).then(
    (r) => r.text(),
    () => '',
  );
  const bytes = /^laurel_nodejs_heap_size_used_bytes (\d+)/m.exec(text)?.[1];
  return bytes ? round(Number(bytes) / 1024 / 1024, 1) : NaN;
}

/** The lowest sample of each minute, placed at that minute's middle. */
function floors(samples: readonly Sample[], key: string): Array<{ atMs: number; y: number }> {
  const byMinute = new Map<number, number>();
  for (const s of samples) {
    const minute = Math.floor(s.atMs / 60_000);
    const y = s[key as keyof Sample];
    byMinute.set(minute, Math.min(byMinute.get(minute) ?? Infinity, y));
  }
  return [...byMinute].map(([minute, y]) => ({ atMs: minute * 60_000 + 30_000, y }));
}

/** Least-squares slope (per hour) of a series against time. */
function slopePerHour(xsMs: number[], ys: number[]): number {
  const n = xsMs.length;
  if (n < 2) return 0;
  const xs = xsMs.map((x) => x / 3_600_000);
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i += 1) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

async function main(): Promise<void> {
  await admin.query(`CREATE DATABASE "${dbName}"`);
  await migrateDatabase(dbUrl);
  const queueRedis = await startPrivateRedis({ persistent: true });
  const leaderboardRedis = await startPrivateRedis();
  redises.push(queueRedis, leaderboardRedis);
  const port = await freePort();
  const env = {
    DATABASE_URL: dbUrl,
    REDIS_URL: queueRedis.url,
    LEADERBOARD_REDIS_URL: leaderboardRedis.url,
    REDIS_PREFIX: tag,
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_KEY: '0',
    CLOSED_PERIOD_CACHE_HOURS: String(CACHE_HOURS),
    LAUREL_CLOCK_SPEED: String(CLOCK_SPEED),
    LAUREL_CLOCK_EPOCH: new Date().toISOString(),
    // A UTC midnight a real minute after the start (set-up takes some seconds): the first
    // day, with events in it, closes about a minute into the load.
    LAUREL_CLOCK_START: new Date(Math.ceil(Date.now() / 86_400_000) * 86_400_000 - 60_000 * CLOCK_SPEED).toISOString(),
  };
  const web = startLaurel('src/bin/web.ts', { ...env, PORT: String(port) });
  const workerMetricsPort = await freePort();
  const worker = startLaurel('src/bin/worker.ts', { ...env, METRICS_PORT: String(workerMetricsPort) });
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
  for (let i = 0; ; i += 1) {
    const ok = await fetch(`${base}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    if (i > 300) throw new Error('web did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }

  let failedRequests = 0;
  const failures = new Map<string, number>();
  const call = async (method: string, url: string, body?: unknown): Promise<Response | null> => {
    try {
      const res = await fetch(base + url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (res.status >= 500 || res.status === 400 || res.status === 401 || res.status === 404) {
        failedRequests += 1;
        const label = `${method} ${url.split('?')[0]!.replace(/\/m\d+/g, '/:member')} ${res.status}`;
        failures.set(label, (failures.get(label) ?? 0) + 1);
      }
      await res.arrayBuffer();
      return res;
    } catch (err) {
      failedRequests += 1;
      failures.set(
        `${method} ${(err as Error).message}`,
        (failures.get(`${method} ${(err as Error).message}`) ?? 0) + 1,
      );
      return null;
    }
  };

  await call('PUT', '/v1/boards/soak-all', {
    aggregation: 'sum',
    period: 'all',
    categories: ['a', 'b'],
    regions: true,
  });
  await call('PUT', '/v1/boards/soak-day', {
    aggregation: 'best',
    period: 'day',
    tieBreak: 'first',
    regions: true,
    graceSeconds: 60,
  });
  await call('PUT', '/v1/boards/soak-week', { aggregation: 'last', period: 'week', tieBreak: 'shared' });
  const member = (i: number) => `m${i % MEMBERS}`;
  for (let i = 0; i < 200; i += 1) {
    await call('PUT', `/v1/members/${member(i)}`, { region: REGIONS[i % REGIONS.length], displayName: `Player ${i}` });
    await call('PUT', `/v1/members/${member(i)}/following`, {
      memberIds: [member(i + 1), member(i + 7), member(i + 300)],
    });
  }

  let accepted = 0;
  let seq = 0;
  const event = () => {
    const i = seq++;
    const board = ['soak-all', 'soak-day', 'soak-week'][i % 3]!;
    const category = board === 'soak-all' && i % 2 ? { category: i % 4 === 1 ? 'a' : 'b' } : {};
    return {
      board,
      member: member((i * 7919) % MEMBERS),
      value: (i * 31) % 1000,
      idempotencyKey: `${tag}-${i}`,
      ...category,
    };
  };
  const single = async () => {
    const e = event();
    if ((await call('POST', '/v1/events', e))?.status === 202) accepted += 1;
  };
  const batch = async () => {
    const events = Array.from({ length: 100 }, event);
    if ((await call('POST', '/v1/events', { events }))?.status === 202) accepted += events.length;
  };
  let readSeq = 0;
  const reads: Array<(m: string) => string> = [
    () => `/v1/boards/soak-all/standings?limit=50`,
    () => `/v1/boards/soak-all/standings?category=a&region=FR&offset=20`,
    (m: string) => `/v1/boards/soak-day/standings/${m}`,
    (m: string) => `/v1/boards/soak-day/standings/${m}/around?radius=5`,
    (m: string) => `/v1/boards/soak-all/standings/${m}/following`,
    (m: string) => `/v1/members/${m}/standings`,
    () => `/v1/boards/soak-week/standings?limit=100`,
    () => `/v1/boards/soak-day/periods`,
  ];
  let closedDays: string[] = [];
  const read = async () => {
    const i = readSeq++;
    const m = member(i * 13);
    // Every tenth read asks for a closed day: its results, and its standings (from Redis, or its final results once retired).
    if (i % 10 === 9 && closedDays.length > 0) {
      const day = closedDays[i % closedDays.length]!;
      await call(
        'GET',
        i % 20 === 9
          ? `/v1/boards/soak-day/periods/${day}/results`
          : `/v1/boards/soak-day/standings/${m}/around?period=${day}`,
      );
      return;
    }
    await call('GET', reads[i % reads.length]!(m));
  };

  let streamsOpened = 0;
  let streamMessages = 0;
  let streamSeq = 0;
  const stream = async () => {
    const i = streamSeq++;
    const board = i % 2 ? 'soak-all' : 'soak-day';
    const url = `/v1/boards/${board}/standings/${member(i * 17)}/stream`;
    const closer = new AbortController();
    const timer = setTimeout(() => closer.abort(), STREAM_SECONDS * 1000);
    try {
      const res = await fetch(base + url, { headers, signal: closer.signal });
      if (res.status !== 200) {
        failedRequests += 1;
        failures.set(`GET stream ${res.status}`, (failures.get(`GET stream ${res.status}`) ?? 0) + 1);
        await res.arrayBuffer();
        return;
      }
      streamsOpened += 1;
      const decoder = new TextDecoder();
      for await (const chunk of res.body!)
        streamMessages += decoder.decode(chunk as Uint8Array, { stream: true }).split('event: standing').length - 1;
    } catch (err) {
      if (!closer.signal.aborted) {
        failedRequests += 1;
        failures.set(
          `GET stream ${(err as Error).message}`,
          (failures.get(`GET stream ${(err as Error).message}`) ?? 0) + 1,
        );
      }
    } finally {
      clearTimeout(timer);
    }
  };

  const queueConnection = new Redis(queueRedis.url, { maxRetriesPerRequest: null });
  const queues = [SCORE_EVENTS_QUEUE, REBUILD_QUEUE, PERIODS_QUEUE, WEBHOOKS_QUEUE].map(
    (name) => new Queue(name, { connection: queueConnection, prefix: queuePrefix(tag, name) }),
  );
  const probes = { queue: new Redis(queueRedis.url), leaderboard: new Redis(leaderboardRedis.url) };
  const soakDb = new pg.Pool({ connectionString: dbUrl, max: 1 });
  const samples: Sample[] = [];
  const started = Date.now();
  const until = started + MINUTES * 60_000;
  const sample = async () => {
    const counts = await Promise.all(
      queues.map((q) => q.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'completed', 'failed')),
    );
    const { rows } = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1`,
      [dbName],
    );
    const waiting = (c: Record<string, number>) => (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.active ?? 0);
    const s: Sample = {
      atMs: Date.now() - started,
      webRssMiB: rssMiB(web.pid!),
      webHeapUsedMiB: await heapUsedMiB(`${base}/metrics`, headers),
      workerHeapUsedMiB: await heapUsedMiB(`http://127.0.0.1:${workerMetricsPort}/metrics`, headers),
      workerRssMiB: rssMiB(worker.pid!),
      leaderboardRedisMiB: await usedMiB(probes.leaderboard),
      queueRedisMiB: await usedMiB(probes.queue),
      postgresConnections: rows[0]!.n,
      scoreQueueWaiting: waiting(counts[0]!),
      rebuildQueueWaiting: waiting(counts[1]!),
      webhooksQueueWaiting: waiting(counts[3]!),
      queueJobsKept: counts.reduce((n, c) => n + Object.values(c).reduce((a, b) => a + b, 0), 0),
    };
    samples.push(s);
    const { rows: days } = await soakDb
      .query<{ key: string }>(`SELECT key FROM periods WHERE board_id = 'soak-day' AND state = 'closed' ORDER BY key`)
      .catch(() => ({ rows: [] as Array<{ key: string }> }));
    closedDays = days.map((d) => d.key);
    process.stdout.write(
      `${Math.round(s.atMs / 1000)}s ${JSON.stringify(s)} closedDays=${closedDays.length} errors=${errorCount} failed=${failedRequests}\n`,
    );
  };

  // Fixed-rate loops (open loop: a slow answer does not slow the load down).
  const loops: Array<Promise<void>> = [];
  const every = (perSec: number, fn: () => Promise<void>) =>
    loops.push(
      (async () => {
        const pending = new Set<Promise<void>>();
        for (let i = 0; Date.now() < until; i += 1) {
          const due = started + (i * 1000) / perSec;
          const wait = due - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          const p = fn().finally(() => pending.delete(p));
          pending.add(p);
        }
        await Promise.all(pending);
      })(),
    );
  every(SINGLES_PER_SEC, single);
  every(BATCHES_PER_SEC, batch);
  every(READS_PER_SEC, read);
  every(STREAMS_OPEN / STREAM_SECONDS, stream);
  let rebuilds = 0;
  every(1000 / REBUILD_EVERY_MS, async () => {
    if (Date.now() - started < 1000) return; // the first slot is at t=0: give ingest a moment
    const res = await call('POST', '/v1/admin/rebuilds', { board: 'soak-all', period: 'current' });
    if (res?.status === 202) rebuilds += 1;
  });
  every(1000 / SAMPLE_EVERY_MS, sample);
  await Promise.all(loops);

  // Drain: every 202 must end up in the ledger.
  const drainDeadline = Date.now() + 180_000;
  for (;;) {
    const c = await queues[0]!.getJobCounts('waiting', 'prioritized', 'active', 'delayed');
    if (Object.values(c).every((n) => n === 0)) break;
    if (Date.now() > drainDeadline) throw new Error(`score queue did not drain: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const { rows: ledger } = await soakDb.query<{ n: number }>(`SELECT count(*)::int AS n FROM score_event_keys`);
  const { rows: periods } = await soakDb.query<{ closed: number; evicted: number }>(
    `SELECT count(*) FILTER (WHERE state = 'closed')::int AS closed, count(cache_evicted_at)::int AS evicted FROM periods WHERE board_id = 'soak-day'`,
  );
  await soakDb.end();

  const fit = samples.filter((s) => s.atMs >= WARMUP_MS);
  const fitHours = fit.length > 1 ? (fit[fit.length - 1]!.atMs - fit[0]!.atMs) / 3_600_000 : 0;
  const series = Object.keys(samples[0]!).filter((k) => k !== 'atMs') as Array<Exclude<keyof Sample, 'atMs'>>;
  const trend = Object.fromEntries(
    series.map((k) => {
      const ys = fit.map((s) => s[k]);
      const mean = ys.reduce((a, b) => a + b, 0) / Math.max(1, ys.length);
      // A process's RSS swings with its garbage between collections; a leak raises the floor
      // the collector returns to, so the memory of a process is judged by its per-minute minimums.
      const points = GC_FLOOR_SERIES.has(k) ? floors(fit, k) : fit.map((s) => ({ atMs: s.atMs, y: s[k] }));
      const slope = slopePerHour(
        points.map((p) => p.atMs),
        points.map((p) => p.y),
      );
      const change = slope * fitHours;
      return [
        k,
        {
          fitted: GC_FLOOR_SERIES.has(k) ? 'per-minute minimum' : 'every sample',
          slopePerHour: round(slope, 3),
          changeOverFit: round(change, 2),
          flat: Math.abs(change) <= Math.max(FLAT_SHARE * mean, FLAT_FLOOR[k] ?? 0),
          first: ys[0],
          last: ys[ys.length - 1],
          min: Math.min(...ys),
          max: Math.max(...ys),
          mean: round(mean, 2),
        },
      ];
    }),
  );
  const result = {
    measuredAt: new Date().toISOString(),
    minutes: MINUTES,
    clockSpeed: CLOCK_SPEED,
    closedPeriodCacheHours: CACHE_HOURS,
    load: {
      singlesPerSec: SINGLES_PER_SEC,
      batchesPerSec: BATCHES_PER_SEC,
      eventsPerBatch: 100,
      readsPerSec: READS_PER_SEC,
      streamsOpen: STREAMS_OPEN,
      streamSeconds: STREAM_SECONDS,
      rebuildEveryMinutes: round(REBUILD_EVERY_MS / 60_000, 1),
    },
    warmupSeconds: WARMUP_MS / 1000,
    samples: samples.length,
    flat: Object.values(trend).every((t) => t.flat),
    trend,
    events: { accepted, inLedger: ledger[0]!.n, lost: accepted - ledger[0]!.n },
    rebuilds,
    streams: { opened: streamsOpened, messages: streamMessages },
    dayPeriods: periods[0],
    errorLines: errorCount,
    warnLines: warnCount,
    firstErrorLines: errorLines,
    failedRequests,
    failures: Object.fromEntries(failures),
    note: 'slopes are per hour, fitted after the warm-up; the machine is shared, so absolute numbers are noisy',
    series: samples,
  };
  writeFileSync(path.join(ROOT, 'bench/results/soak.json'), `${JSON.stringify(result, null, 2)}\n`);
  const { series: _, ...summary } = result;
  console.log(JSON.stringify(summary, null, 2));
  await Promise.all(queues.map((q) => q.close()));
  queueConnection.disconnect();
  probes.queue.disconnect();
  probes.leaderboard.disconnect();
}

async function stopAll(): Promise<void> {
  for (const child of processes) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  for (const r of redises) await r.stop();
  await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
  await admin.end();
}

try {
  await main();
} finally {
  await stopAll();
}
process.exit(0);
