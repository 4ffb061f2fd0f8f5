import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { cloneTemplate, databaseUrl, dropDatabase } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { lateProxy } from '../support/late-tcp-proxy.js';
import { startLaurel, waitForHttp, type LaurelProcess, type LogLine } from '../support/laurel-process.js';
import { startPrivateRedis } from '../support/redis-server.js';
import { until as untilWithin } from '../support/poll.js';

/** Processes start and retry for up to tens of seconds here. */
const until = <T>(what: string, probe: () => Promise<T | undefined>) => untilWithin(what, probe, { timeoutMs: 40_000, everyMs: 200 });

const ADMIN_KEY = 'down-at-start-admin-key-0123456789';
const INTERVAL_SECONDS = 2;
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

/**
 * Lines about one failing part must be at least the interval apart (the log's own times),
 * and something about it must have been counted rather than written.
 */
function expectRepeatLimited(logs: LogLine[], dependency: string) {
  const lines = logs.filter((l) => l.dependency === dependency);
  expect(lines.length, `no line about ${dependency}`).toBeGreaterThan(0);
  for (let i = 1; i < lines.length; i += 1) {
    expect((lines[i]!.time as number) - (lines[i - 1]!.time as number)).toBeGreaterThanOrEqual(INTERVAL_SECONDS * 1000);
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
  const bringBack = { 'queue-redis': queue.start, 'leaderboard-redis': leaderboard.start, postgres: postgres.start }[down];

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
  const stoppedWorker = startLaurel('worker', { ...env, METRICS_PORT: String(stoppedProbePort) }, `worker-stopped-${down}`);
  const processes: LaurelProcess[] = [web, worker, stoppedWorker];
  cleanups.push(() => Promise.all(processes.map((p) => p.stop('SIGKILL'))));
  const base = `http://127.0.0.1:${webPort}`;
  const workerBase = `http://127.0.0.1:${probePort}`;
  // The port opens although a dependency is missing.
  await Promise.all([waitForHttp(`${base}/healthz`), waitForHttp(`${workerBase}/healthz`), waitForHttp(`http://127.0.0.1:${stoppedProbePort}/healthz`)]);
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

/** SIGTERM while the dependency is still down: an orderly exit 0 before the shutdown timeout. */
async function expectCleanStopWhileDown(p: LaurelProcess) {
  expect(await p.stop('SIGTERM')).toBe(0);
  expect(p.logs.some((l) => l.msg === 'stopped')).toBe(true);
}

async function expectApplied(base: string, board: string, member: string, score: string) {
  await until(`event on ${board} applied`, async () => {
    const res = await call(base, 'GET', `/v1/boards/${board}/standings?period=all&limit=10`);
    return res.status === 200 && res.body.entries.some((e: any) => e.member === member && String(e.score) === score) ? true : undefined;
  });
}

const board = { aggregation: 'sum', period: 'all', tieBreak: 'member' };
const event = (key: string) => ({ board: 'kills', member: 'ann', value: 7, idempotencyKey: key });

describe('a dependency down when Laurel starts', () => {
  it('queue Redis down: ports open, readiness names it (redis), intake 503, reads served; recovers by itself', async () => {
    const s = await startWithout('queue-redis');
    const ready = await readyzFailing(s.base, ['redis']);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(ready.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
    expect((await readyzFailing(s.workerBase, ['redis'])).status).toBe(503);
    expect((await call(s.base, 'PUT', '/v1/boards/kills', board)).status).toBe(201);
    expect((await call(s.base, 'POST', '/v1/events', event('q-1'))).status).toBe(503);
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
  });

  it('leaderboard Redis down: web ready but degraded naming it, worker unready; intake kept and applied once it is back', async () => {
    const s = await startWithout('leaderboard-redis');
    const ready = await readyzFailing(s.base, ['leaderboard-redis']);
    expect(ready).toMatchObject({ status: 200, body: { status: 'degraded', failing: ['leaderboard-redis'] } });
    const workerReady = await readyzFailing(s.workerBase, ['leaderboard-redis']);
    expect(workerReady).toMatchObject({ status: 503, body: { failing: ['leaderboard-redis'] } });
    expect((await call(s.base, 'PUT', '/v1/boards/kills', board)).status).toBe(201);
    expect((await call(s.base, 'GET', '/v1/boards/kills')).status).toBe(200);
    expect((await call(s.base, 'POST', '/v1/events', event('l-1'))).status).toBe(202);
    expect([200, 404, 503]).toContain((await call(s.base, 'GET', '/v1/boards/kills/standings?period=all')).status);

    await s.web.waitForLog((l) => l.dependency === 'leaderboard-redis' && Number(l.repeated) > 0);
    await expectCleanStopWhileDown(s.stoppedWorker);
    await s.bringBack();
    await expectApplied(s.base, 'kills', 'ann', '7');
    expect(await call(s.base, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
    expectRepeatLimited(s.web.logs, 'leaderboard-redis');
    expect(await s.web.stop('SIGTERM')).toBe(0);
    expect(await s.worker.stop('SIGTERM')).toBe(0);
  });

  it('Postgres down: ports open, readiness names it, intake 503 (never 500); recovers by itself', async () => {
    const s = await startWithout('postgres');
    expect((await readyzFailing(s.base, ['postgres', 'migrations', 'functions'])).status).toBe(503);
    expect((await readyzFailing(s.workerBase, ['postgres', 'migrations', 'functions'])).status).toBe(503);
    expect((await call(s.base, 'POST', '/v1/events', event('p-1'))).status).toBe(503);
    expect((await call(s.base, 'GET', '/v1/boards/kills')).status).toBe(503);

    await expectCleanStopWhileDown(s.stoppedWorker);
    await s.bringBack();
    await until('web ready', async () => ((await call(s.base, 'GET', '/readyz')).status === 200 ? true : undefined));
    expect((await call(s.base, 'PUT', '/v1/boards/kills', board)).status).toBe(201);
    expect((await call(s.base, 'POST', '/v1/events', event('p-2'))).status).toBe(202);
    await expectApplied(s.base, 'kills', 'ann', '7');
    for (const p of [s.web, s.worker]) for (const dep of new Set(p.logs.map((l) => l.dependency).filter(Boolean))) expectRepeatLimited(p.logs, String(dep));
    expect(await s.web.stop('SIGTERM')).toBe(0);
    expect(await s.worker.stop('SIGTERM')).toBe(0);
  });
});
