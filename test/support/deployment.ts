import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { cloneTemplate, databaseUrl, dropDatabase } from './databases.js';
import { freePort } from './free-port.js';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';
import { startLaurel, waitForHttp, type LaurelProcess } from './laurel-process.js';
import { referenceStandings, prng, type RefEvent } from './reference.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
export const ADMIN_KEY = 'chaos-admin-key-7f3e9a1c5b2d8e4f0a6c';

/**
 * One Laurel deployment of the test's own, run as production runs it: web processes and
 * worker processes (real entry points; or one all-in-one process), a persistent (AOF)
 * queue Redis and a volatile leaderboard Redis that the test may crash, and a database
 * cloned for it alone.
 */
export interface Deployment {
  env: Record<string, string>;
  /** The first web process; `baseUrls` lists them all. */
  baseUrl: string;
  baseUrls: string[];
  queueRedis: PrivateRedis;
  leaderboardRedis: PrivateRedis;
  pg: pg.Pool;
  webs: LaurelProcess[];
  workers: LaurelProcess[];
  startWorker(extraEnv?: Record<string, string>, name?: string): Promise<LaurelProcess>;
  /** Starts web process `index` again on its port (after it was stopped or killed). */
  restartWeb(index: number): Promise<LaurelProcess>;
  api(method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export interface DeploymentOptions {
  webs?: number;
  workers?: number;
  /** One process doing both (the development mode) instead of separate webs and workers. */
  allInOne?: boolean;
  /** Variables of the web processes' own (on top of the deployment's). */
  webEnv?: Record<string, string>;
  /** Variables of every process (on top of the deployment's defaults). */
  env?: Record<string, string>;
}

export async function startDeployment(options: DeploymentOptions = {}): Promise<Deployment> {
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const dbName = `laurel_chaos_${suffix}`;
  await cloneTemplate(dbName);
  const queueRedis = await startPrivateRedis({ persistent: true });
  const leaderboardRedis = await startPrivateRedis();
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl(dbName),
    REDIS_URL: queueRedis.url,
    LEADERBOARD_REDIS_URL: leaderboardRedis.url,
    REDIS_PREFIX: 'chaos',
    ADMIN_API_KEY: ADMIN_KEY,
    METRICS_PORT: '0',
    WORKER_CONCURRENCY: '4',
    // A dead worker's jobs are taken over after this long (30 s in production).
    JOB_LOCK_MS: '2000',
    ...options.env,
  };
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
  const workers: LaurelProcess[] = [];
  const startWorker = async (extraEnv: Record<string, string> = {}, name = `worker-${workers.length + 1}`) => {
    const worker = startLaurel('worker', { ...env, ...extraEnv }, name);
    workers.push(worker);
    await worker.waitForLog((l) => l.msg === 'workers started');
    return worker;
  };
  const webs: LaurelProcess[] = [];
  const baseUrls: string[] = [];
  const ports: number[] = [];
  let restarts = 0;
  const startWeb = async (i: number) => {
    const name = options.allInOne ? 'all-in-one' : `web-${i + 1}${restarts > 0 ? `-${restarts}` : ''}`;
    webs[i] = startLaurel(
      options.allInOne ? 'all' : 'web',
      { ...env, ...options.webEnv, PORT: String(ports[i]) },
      name,
    );
    await waitForHttp(`${baseUrls[i]}/readyz`);
    return webs[i];
  };
  for (let i = 0; i < (options.allInOne ? 1 : (options.webs ?? 1)); i += 1) {
    ports.push(await freePort());
    baseUrls.push(`http://127.0.0.1:${ports[i]}`);
    await startWeb(i);
  }
  const baseUrl = baseUrls[0]!;
  if (options.allInOne) await webs[0]!.waitForLog((l) => l.msg === 'workers started');
  else for (let i = 0; i < (options.workers ?? 2); i += 1) await startWorker();

  return {
    env,
    baseUrl,
    baseUrls,
    queueRedis,
    leaderboardRedis,
    pg: pool,
    webs,
    workers,
    startWorker,
    async restartWeb(i) {
      await webs[i]!.stop('SIGKILL');
      restarts += 1;
      return startWeb(i);
    },
    async api(method, urlPath, body) {
      const res = await fetch(baseUrl + urlPath, {
        method,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null };
    },
    async close() {
      await Promise.all([...webs, ...workers].map((p) => p.stop('SIGKILL')));
      // LAUREL_TEST_LOG_DIR keeps each process's log lines for a post-mortem.
      const logDir = process.env.LAUREL_TEST_LOG_DIR;
      if (logDir) {
        for (const p of [...webs, ...workers]) {
          writeFileSync(path.join(logDir, `${dbName}-${p.name}.log`), p.logs.map((l) => JSON.stringify(l)).join('\n'));
        }
      }
      await pool.end();
      await queueRedis.stop();
      await leaderboardRedis.stop();
      await dropDatabase(dbName);
    },
  };
}

export interface StreamEvent {
  board: string;
  member: string;
  value: number;
  idempotencyKey: string;
}

/** `count` events with known keys over `members` members, cut into request batches. */
export function makeBatches(
  board: string,
  count: number,
  batchSize: number,
  seed: number,
  members = 200,
): StreamEvent[][] {
  const rand = prng(seed);
  const events = Array.from({ length: count }, (_, i) => ({
    board,
    member: `m${String(Math.floor(rand() * members)).padStart(4, '0')}`,
    value: 1 + Math.floor(rand() * 100),
    idempotencyKey: `${board}-e${i}`,
  }));
  const batches: StreamEvent[][] = [];
  for (let i = 0; i < events.length; i += batchSize) batches.push(events.slice(i, i + batchSize));
  return batches;
}

/**
 * Posts every batch the way a game server does: at a steady pace, and whatever fails
 * (503, a refused connection, a timeout) is posted again with the same keys until it is
 * accepted. `onAccepted(n)` runs after the n-th accepted batch, to fire the chaos.
 */
export async function postSteadily(
  baseUrl: string,
  batches: readonly StreamEvent[][],
  options: { paceMs?: number; onAccepted?: (n: number) => Promise<void> | void } = {},
): Promise<{ retries: number; statuses: Record<string, number> }> {
  let accepted = 0;
  let retries = 0;
  const statuses: Record<string, number> = {};
  for (const batch of batches) {
    for (let attempt = 0; ; attempt += 1) {
      const status = await fetch(`${baseUrl}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events: batch }),
        signal: AbortSignal.timeout(10_000),
      }).then(
        async (r) => (await r.arrayBuffer(), r.status),
        () => 'network',
      );
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === 202) break;
      if (typeof status === 'number' && status < 500 && status !== 429) throw new Error(`batch refused with ${status}`);
      if (attempt > 600) throw new Error('a batch was never accepted');
      retries += 1;
      await new Promise((r) => setTimeout(r, 100));
    }
    accepted += 1;
    await options.onAccepted?.(accepted);
    if (options.paceMs) await new Promise((r) => setTimeout(r, options.paceMs));
  }
  return { retries, statuses };
}

/**
 * Runs `laurel verify` (the real CLI) against the deployment: Redis compared with Postgres
 * (every board by default). `ok` only when nothing differs and Redis holds every scope: a
 * scope still missing (verify's exit 0) means the rebuild a test waits for has not happened.
 */
export async function verifyCli(d: Deployment, board?: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', 'src/cli/laurel.ts', 'verify', ...(board ? ['--board', board] : [])],
      {
        cwd: ROOT,
        env: { ...process.env, ...d.env, LOG_LEVEL: 'silent' },
      },
    );
    return { ok: !stdout.includes('not in Redis'), output: stdout };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

export interface Consistency {
  missingKeys: string[];
  doubledKeys: string[];
  unknownKeys: string[];
  aggregatesDiffer: string[];
  standingsDiffer: boolean;
  verify: { ok: boolean; output: string };
}

/**
 * Waits until every posted key is in the ledger and `verify` passes, then checks the whole
 * chain: the ledger holds each key exactly once, Postgres aggregates equal the independent
 * reference, the served standings equal the reference rank by rank, and Redis equals Postgres.
 */
export async function settleAndCheck(
  d: Deployment,
  board: string,
  batches: readonly StreamEvent[][],
  timeoutMs = 90_000,
): Promise<Consistency> {
  const events = batches.flat();
  const deadline = Date.now() + timeoutMs;
  let verify = { ok: false, output: 'not run' };
  for (;;) {
    const { rows } = await d.pg.query<{ n: number }>(
      'SELECT count(DISTINCT idempotency_key)::int AS n FROM score_events WHERE board_id = $1',
      [board],
    );
    if (rows[0]!.n >= events.length) {
      verify = await verifyCli(d, board);
      if (verify.ok) break;
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 500));
  }

  const { rows: ledger } = await d.pg.query<{ key: string; n: number }>(
    'SELECT idempotency_key AS key, count(*)::int AS n FROM score_events WHERE board_id = $1 GROUP BY 1',
    [board],
  );
  const inLedger = new Map(ledger.map((r) => [r.key, r.n]));
  const posted = new Set(events.map((e) => e.idempotencyKey));
  const ref: RefEvent[] = events.map((e, i) => ({ key: e.idempotencyKey, member: e.member, units: e.value, atMs: i }));
  const expected = referenceStandings(ref, { aggregation: 'sum', order: 'desc', tieBreak: 'member' });

  const { rows: aggs } = await d.pg.query<{ member: string; value: string }>(
    `SELECT member_id AS member, value::text FROM member_aggregates WHERE board_id = $1 AND category = 'all'`,
    [board],
  );
  const actualAgg = new Map(aggs.map((a) => [a.member, Number(a.value)]));
  const aggregatesDiffer = expected
    .filter((s) => actualAgg.get(s.member) !== s.units)
    .map((s) => `${s.member}: expected ${s.units}, Postgres has ${actualAgg.get(s.member)}`);
  if (actualAgg.size !== expected.length)
    aggregatesDiffer.push(`Postgres ranks ${actualAgg.size} members, reference ${expected.length}`);

  const served: Array<{ rank: number; member: string; score: number }> = [];
  for (let offset = 0; offset < expected.length; offset += 200) {
    const page = await d.api('GET', `/v1/boards/${board}/standings?period=all&limit=200&offset=${offset}`);
    served.push(...(page.body.entries as typeof served));
  }
  const standingsDiffer =
    JSON.stringify(served.map((e) => [e.rank, e.member, e.score])) !==
    JSON.stringify(expected.map((e) => [e.rank, e.member, e.units]));

  return {
    missingKeys: [...posted].filter((k) => !inLedger.has(k)),
    doubledKeys: [...inLedger].filter(([, n]) => n > 1).map(([k]) => k),
    unknownKeys: [...inLedger.keys()].filter((k) => !posted.has(k)),
    aggregatesDiffer,
    standingsDiffer,
    verify,
  };
}

/** A board that counts every point (sum), so a lost or doubled event always shows. */
export async function createSumBoard(d: Deployment, board: string): Promise<void> {
  const res = await d.api('PUT', `/v1/boards/${board}`, { aggregation: 'sum', period: 'all', tieBreak: 'member' });
  if (res.status !== 201) throw new Error(`board not created: ${res.status} ${JSON.stringify(res.body)}`);
}

export const CONSISTENT: Omit<Consistency, 'verify'> & { verify: { ok: true } } = {
  missingKeys: [],
  doubledKeys: [],
  unknownKeys: [],
  aggregatesDiffer: [],
  standingsDiffer: false,
  verify: { ok: true },
};
