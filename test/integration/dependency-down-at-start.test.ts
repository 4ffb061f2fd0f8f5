import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { cloneTemplate, databaseUrl, dropDatabase } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { lateProxy } from '../support/late-tcp-proxy.js';
import { startLaurel, waitForHttp, type LaurelProcess, type LogLine } from '../support/laurel-process.js';
import { startPrivateRedis } from '../support/redis-server.js';
import { until as untilWithin } from '../support/poll.js';

/** Processes start and retry for up to tens of seconds here. */
const until = <T>(what: string, probe: () => Promise<T | undefined>) =>
  untilWithin(what, probe, { timeoutMs: 40_000, everyMs: 200 });

const ADMIN_KEY = 'down-at-start-admin-key-0123456789';
const INTERVAL_SECONDS = 2;
/** On a loaded machine a process takes 20-55 s to open its port: a start-up budget, not a performance bound. */
const START_UP_MS = 180_000;
/** Three processes starting and each dependency case's waits. */
const TEST_MS = 480_000;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean().catch(() => undefined);
});

type Dependency = 'queue-redis' | 'leaderboard-redis' | 'postgres';

async function call(base: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** A log line's time (ISO 8601) in epoch milliseconds. */
const timeOf = (line: LogLine) => Date.parse(line.time!);

/**
 * Lines about one failing part must be at least the interval apart (the log's own times),
 * and something about it must have been counted rather than written.
 */
function expectRepeatLimited(logs: LogLine[], dependency: string) {
  const lines = logs.filter((l) => l.dependency === dependency);
  expect(lines.length, `no line about ${dependency}`).toBeGreaterThan(0);
  for (let i = 1; i < lines.length; i += 1) {
    expect(timeOf(lines[i]!) - timeOf(lines[i - 1]!)).toBeGreaterThanOrEqual(INTERVAL_SECONDS * 1000);
  }
  return lines;
}

async function startWithout(down: Dependency) {
  const dbName = `laurel_down_${down.replace('-', '_')}_${randomBytes(3).toString('hex')}`;
  await cloneTemplate(dbName);
  cleanups.push(() => dropDatabase(dbName));
  const queue = await startPrivateRedis({ notYet: down === 'queue-redis' });
  cleanups.push(() => queue.stop());
  const leaderboard = await startPrivateRedis({ notYet: down === 'leaderboard-redis' });
  cleanups.push(() => leaderboard.stop());
  const postgres = await lateProxy(Number(new URL(databaseUrl(dbName)).port || 5432));
  if (down !== 'postgres') await postgres.start();
  cleanups.push(() => postgres.stop());
  const bringBack = { 'queue-redis': queue.start, 'leaderboard-redis': leaderboard.start, postgres: postgres.start }[
    down
  ];

  const dbUrl = new URL(databaseUrl(dbName));
  dbUrl.port = String(postgres.port);
  const env = {
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL: queue.url,
    LEADERBOARD_REDIS_URL: leaderboard.url,
    REDIS_PREFIX: 'down',
    ADMIN_API_KEY: ADMIN_KEY,
    ERROR_LOG_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
    SHUTDOWN_TIMEOUT_MS: '8000',
  };
  const webPort = await freePort();
  const [probePort, stoppedProbePort] = [await freePort(), await freePort()];
  const web = startLaurel('web', { ...env, PORT: String(webPort) }, `web-${down}`);
  const worker = startLaurel('worker', { ...env, METRICS_PORT: String(probePort) }, `worker-${down}`);
  const stoppedWorker = startLaurel(
    'worker',
    { ...env, METRICS_PORT: String(stoppedProbePort) },
    `worker-stopped-${down}`,
  );
  const processes: LaurelProcess[] = [web, worker, stoppedWorker];
  cleanups.push(() => Promise.all(processes.map((p) => p.stop('SIGKILL'))));
  const base = `http://127.0.0.1:${webPort}`;
  const workerBase = `http://127.0.0.1:${probePort}`;
  // The port opens although a dependency is missing.
  await Promise.all([
    waitForHttp(`${base}/healthz`, START_UP_MS),
    waitForHttp(`${workerBase}/healthz`, START_UP_MS),
    waitForHttp(`http://127.0.0.1:${stoppedProbePort}/healthz`, START_UP_MS),
  ]);
  return { base, workerBase, web, worker, stoppedWorker, bringBack };
}

/**
 * /readyz once the connections that can be made are made (the first answers may still list a
 * Redis that is up but not yet connected).
 */
async function readyzFailing(base: string, failing: string[]) {
  return until(`readyz failing ${failing.join(', ')}`, async () => {
    const res = await call(base, 'GET', '/readyz');
    return JSON.stringify(res.body.failing) === JSON.stringify(failing) ? res : undefined;
  });
}

/** Levels of a line that reports a failure (pino writes level names). */
const WARN_OR_ABOVE = new Set(['warn', 'error', 'fatal']);

/**
 * Sends `count` requests (at once, unless `oneAtATime`) while a dependency is down and checks each answer's status;
 * the warn and error lines the process wrote meanwhile must each name a dependency and be
 * at most one per dependency per interval (a refused request is counted, not written), so
 * fewer than the requests themselves.
 */
async function burst(
  p: LaurelProcess,
  count: number,
  send: () => Promise<{ status: number; body: any }>,
  status: number,
  oneAtATime = false,
) {
  const from = Date.now();
  const answers = [];
  if (oneAtATime) for (let i = 0; i < count; i += 1) answers.push(await send());
  else answers.push(...(await Promise.all(Array.from({ length: count }, send))));
  const to = Date.now();
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => status));
  // Lines are written as the answers go out; give the pipe a moment to deliver the last ones.
  await new Promise((r) => setTimeout(r, 500));
  const lines = p.logs.filter((l) => WARN_OR_ABOVE.has(l.level) && timeOf(l) >= from && timeOf(l) <= to);
  for (const line of lines) expect(line.dependency, JSON.stringify(line)).toBeTypeOf('string');
  const dependencies = new Set(lines.map((l) => l.dependency)).size;
  const bound = dependencies * (Math.floor((to - from) / (INTERVAL_SECONDS * 1000)) + 1);
  expect(lines.length).toBeLessThanOrEqual(bound);
  expect(lines.length).toBeLessThan(count);
  return answers;
}

/** SIGTERM while the dependency is still down: an orderly exit 0 before the shutdown timeout. */
async function expectCleanStopWhileDown(p: LaurelProcess) {
  expect(await p.stop('SIGTERM')).toBe(0);
  expect(p.logs.some((l) => l.msg === 'stopped')).toBe(true);
}

async function expectApplied(base: string, board: string, member: string, score: string) {
  await until(`event on ${board} applied`, async () => {
    const res = await call(base, 'GET', `/v1/boards/${board}/standings?period=all&limit=10`);
    return res.status === 200 && res.body.entries.some((e: any) => e.member === member && String(e.score) === score)
      ? true
      : undefined;
  });
}

const board = { aggregation: 'sum', period: 'all', tieBreak: 'member' };
const event = (key: string) => ({ board: 'kills', member: 'ann', value: 7, idempotencyKey: key });

describe('a dependency down when Laurel starts', () => {
  it(
    'queue Redis down: ports open, readiness names it (redis), intake 503, reads served; recovers by itself',
    { timeout: TEST_MS },
    async () => {
      const s = await startWithout('queue-redis');
      const ready = await readyzFailing(s.base, ['redis']);
      expect(ready.status).toBe(503);
      expect(JSON.stringify(ready.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
      expect((await readyzFailing(s.workerBase, ['redis'])).status).toBe(503);
      expect((await call(s.base, 'PUT', '/v1/boards/kills', board)).status).toBe(201);
      expect((await call(s.base, 'POST', '/v1/events', event('q-1'))).status).toBe(503);
      await burst(s.web, 40, () => call(s.base, 'POST', '/v1/events', event('q-1')), 503);
      expect((await call(s.base, 'GET', '/v1/boards/kills')).status).toBe(200);
      // Nothing scored yet: a plain 404 for the empty period, answered without the queue Redis.
      expect((await call(s.base, 'GET', '/v1/boards/kills/standings?period=all')).body.error).toBe('not_found');

      await s.worker.waitForLog((l) => l.dependency === 'queue-redis' && Number(l.repeated) > 0);
      await expectCleanStopWhileDown(s.stoppedWorker);
      await s.bringBack();
      await until('web ready', async () => ((await call(s.base, 'GET', '/readyz')).status === 200 ? true : undefined));
      expect((await call(s.base, 'POST', '/v1/events', event('q-2'))).status).toBe(202);
      await expectApplied(s.base, 'kills', 'ann', '7');
      expectRepeatLimited(s.worker.logs, 'queue-redis');
      expectRepeatLimited(s.web.logs, 'queue-redis');
      expect(await s.web.stop('SIGTERM')).toBe(0);
      expect(await s.worker.stop('SIGTERM')).toBe(0);
    },
  );

  it(
    'leaderboard Redis down: web ready but degraded naming it, worker unready; intake kept, reads from Postgres, applied once it is back',
    { timeout: TEST_MS },
    async () => {
      const s = await startWithout('leaderboard-redis');
      const ready = await readyzFailing(s.base, ['leaderboard-redis']);
      expect(ready).toMatchObject({ status: 200, body: { status: 'degraded', failing: ['leaderboard-redis'] } });
      const workerReady = await readyzFailing(s.workerBase, ['leaderboard-redis']);
      expect(workerReady).toMatchObject({ status: 503, body: { failing: ['leaderboard-redis'] } });
      expect((await call(s.base, 'PUT', '/v1/boards/kills', board)).status).toBe(201);
      expect((await call(s.base, 'GET', '/v1/boards/kills')).status).toBe(200);
      expect((await call(s.base, 'POST', '/v1/events', event('l-1'))).status).toBe(202);
      // Once the worker has committed the event to Postgres (its projection into Redis keeps
      // failing), the standings are served from Postgres.
      const fromDb = await untilWithin(
        'standings served from Postgres',
        async () => {
          const res = await call(s.base, 'GET', '/v1/boards/kills/standings?period=all&limit=10');
          return res.status === 200 ? res : undefined;
        },
        { timeoutMs: START_UP_MS, everyMs: 200 },
      );
      expect(fromDb.body).toMatchObject({
        source: 'database',
        total: 1,
        entries: [{ rank: 1, member: 'ann', score: 7 }],
      });
      // One at a time: reads from Postgres are bounded per process (FALLBACK_MAX_CONCURRENT), and
      // more at once are refused by design.
      const reads = await burst(
        s.web,
        40,
        () => call(s.base, 'GET', '/v1/boards/kills/standings?period=all&limit=10'),
        200,
        true,
      );
      for (const read of reads) expect(read.body).toEqual(fromDb.body);

      await s.web.waitForLog((l) => l.dependency === 'leaderboard-redis' && Number(l.repeated) > 0);
      await expectCleanStopWhileDown(s.stoppedWorker);
      await s.bringBack();
      await until('web ready, not degraded', async () => {
        const res = await call(s.base, 'GET', '/readyz');
        return res.status === 200 && res.body.status === 'ready' ? true : undefined;
      });
      // Postgres already served it; once Redis is back the worker's retried projection puts it there.
      await until('standings served from the cache', async () => {
        const res = await call(s.base, 'GET', '/v1/boards/kills/standings?period=all&limit=10');
        return res.status === 200 && res.body.source === 'cache' ? res : undefined;
      }).then((res) => expect({ ...res.body, source: 'database' }).toEqual(fromDb.body));
      expectRepeatLimited(s.web.logs, 'leaderboard-redis');
      expect(await s.web.stop('SIGTERM')).toBe(0);
      expect(await s.worker.stop('SIGTERM')).toBe(0);
    },
  );

  it(
    'Postgres down: ports open, readiness names it, intake 503 (never 500); recovers by itself',
    { timeout: TEST_MS },
    async () => {
      const s = await startWithout('postgres');
      expect((await readyzFailing(s.base, ['postgres', 'migrations', 'functions'])).status).toBe(503);
      expect((await readyzFailing(s.workerBase, ['postgres', 'migrations', 'functions'])).status).toBe(503);
      expect((await call(s.base, 'POST', '/v1/events', event('p-1'))).status).toBe(503);
      expect((await call(s.base, 'GET', '/v1/boards/kills')).status).toBe(503);
      await burst(s.web, 40, () => call(s.base, 'POST', '/v1/events', event('p-1')), 503);
      await burst(s.web, 40, () => call(s.base, 'GET', '/v1/boards/kills'), 503);
      // The next refusal after the interval reports how many were counted rather than written.
      await new Promise((r) => setTimeout(r, INTERVAL_SECONDS * 1000));
      expect((await call(s.base, 'GET', '/v1/boards/kills')).status).toBe(503);
      await s.web.waitForLog((l) => l.dependency === 'postgres' && Number(l.repeated) > 0);

      await expectCleanStopWhileDown(s.stoppedWorker);
      await s.bringBack();
      await until('web ready', async () => ((await call(s.base, 'GET', '/readyz')).status === 200 ? true : undefined));
      expect((await call(s.base, 'PUT', '/v1/boards/kills', board)).status).toBe(201);
      expect((await call(s.base, 'POST', '/v1/events', event('p-2'))).status).toBe(202);
      await expectApplied(s.base, 'kills', 'ann', '7');
      // The refusals above are logged under Postgres' name, one line per interval.
      expectRepeatLimited(s.web.logs, 'postgres');
      for (const p of [s.web, s.worker])
        for (const dep of new Set(p.logs.map((l) => l.dependency).filter(Boolean)))
          expectRepeatLimited(p.logs, String(dep));
      expect(await s.web.stop('SIGTERM')).toBe(0);
      expect(await s.worker.stop('SIGTERM')).toBe(0);
    },
  );
});
