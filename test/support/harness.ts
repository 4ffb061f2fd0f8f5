import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { parseEnv, type Env } from '../../src/config/env.js';
import { createContext, type AppContext, type FaultHooks } from '../../src/context.js';
import { createWebApp } from '../../src/http/app.js';
import { createLogger } from '../../src/logger.js';
import { waitUntilReady } from '../../src/storage/redis/connections.js';
import { keysOfPrefix, unlinkMatching } from '../../src/storage/redis/maintenance.js';
import { startWorkers, type RunningWorkers } from '../../src/jobs/start-workers.js';
import {
  cloneTemplate,
  databaseUrl,
  dropDatabase,
  TEST_REDIS_CLUSTER,
  TEST_REDIS_URL,
  testRedis,
} from './databases.js';
import { ManualClock } from './manual-clock.js';

export const ADMIN_KEY = 'test-admin-key-5e1a9c3f7b0d2e8a4c6f-91b7';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Harness {
  ctx: AppContext;
  env: Env;
  clock: ManualClock;
  faults: FaultHooks;
  baseUrl: string;
  workers: RunningWorkers | null;
  /** Calls the HTTP API; `key` defaults to the admin key, null sends none. */
  api<T = any>(method: string, path: string, body?: unknown, key?: string | null): Promise<ApiResponse<T>>;
  /** Posts a batch to /v1/events, waiting for its results unless `wait` is false; throws unless it is accepted (200, or 202 without waiting). */
  postEvents<R = any>(events: object[], wait?: boolean): Promise<R[]>;
  /** Waits until the score and rebuild queues have nothing waiting, active or delayed. */
  drain(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The harness's configuration as environment variables, for a real Laurel process started beside it. */
export function envForChild(env: Env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

let counter = 0;

export interface HarnessOptions {
  /** Start BullMQ workers in-process (default true). */
  workers?: boolean;
  concurrency?: number;
  env?: Partial<Record<keyof Env, string>>;
  /** False when the test points Laurel at a Redis that is down on purpose. */
  redisReachable?: boolean;
  /** Where the pino logger writes (set env.LOG_LEVEL too); by default logs are discarded. */
  logDestination?: NodeJS.WritableStream;
}

/**
 * A real Laurel over a fresh clone of the migrated template database and its own Redis
 * key prefix: HTTP on an ephemeral port, real BullMQ workers, real Postgres and Redis.
 */
export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const suffix = `${process.pid}_${++counter}_${randomBytes(3).toString('hex')}`;
  const dbName = `laurel_t_${suffix}`;
  await cloneTemplate(dbName);
  const prefix = `lt${suffix}`.replace(/_/g, '-');
  const env = parseEnv({
    DATABASE_URL: databaseUrl(dbName),
    REDIS_URL: TEST_REDIS_URL,
    REDIS_CLUSTER: String(TEST_REDIS_CLUSTER),
    ADMIN_API_KEY: ADMIN_KEY,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  const clock = new ManualClock();
  const faults: FaultHooks = {};
  const ctx = createContext(env, {
    clock,
    faults,
    log: createLogger(env.LOG_LEVEL, options.logDestination),
    name: 'laurel-test',
  });
  if (options.redisReachable !== false) {
    await waitUntilReady(ctx.queueRedis);
    await waitUntilReady(ctx.leaderboard.redis);
  }
  const web = createWebApp(ctx);
  const server: Server = await new Promise((resolve) => {
    const s = createServer(web.handler).listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Job schedulers stay off: tests drive the period tick themselves, with their own clock.
  const workers =
    options.workers === false ? null : startWorkers(ctx, { concurrency: options.concurrency ?? 2, schedulers: false });

  const harness: Harness = {
    ctx,
    env,
    clock,
    faults,
    baseUrl,
    workers,
    async api(method, path, body, key = ADMIN_KEY) {
      const headers: Record<string, string> = {};
      if (key !== null) headers.authorization = `Bearer ${key}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(baseUrl + path, {
        method,
        headers,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed as any, headers: res.headers };
    },
    async postEvents(events, wait = true) {
      const res = await harness.api('POST', `/v1/events${wait ? '?wait=true' : ''}`, { events });
      if (res.status !== (wait ? 200 : 202))
        throw new Error(`POST /v1/events answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.results ?? [];
    },
    async drain(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const counts = [
          await ctx.scoreQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children'),
          await ctx.rebuildQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children'),
        ];
        if (counts.every((c) => Object.values(c).every((n) => n === 0))) return;
        if (Date.now() > deadline) throw new Error(`queue not drained: ${JSON.stringify(counts)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      await workers?.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await web.close();
      await ctx.close();
      await deleteKeys(prefix);
      await dropDatabase(dbName);
    },
  };
  return harness;
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = testRedis();
  try {
    await unlinkMatching(redis, keysOfPrefix(prefix));
  } finally {
    redis.disconnect();
  }
}
