import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { EventEmitter } from 'node:events';
import type { Env } from '../../config/env.js';
import { Unavailable } from '../../domain/errors.js';

/** A standalone Redis or a Redis Cluster: both take the same commands. */
export type RedisClient = Redis | Cluster;

/** Where one of Laurel's two Redis roles lives: one URL, or the seed nodes of a cluster. */
export interface RedisTarget {
  urls: string[];
  cluster: boolean;
}

export function queueTarget(env: Env): RedisTarget {
  return { urls: splitUrls(env.REDIS_URL), cluster: env.REDIS_CLUSTER };
}

/** Without a URL of its own the leaderboard Redis is the queue Redis. */
export function leaderboardTarget(env: Env): RedisTarget {
  if (env.LEADERBOARD_REDIS_URL === undefined) return queueTarget(env);
  return { urls: splitUrls(env.LEADERBOARD_REDIS_URL), cluster: env.LEADERBOARD_REDIS_CLUSTER ?? false };
}

function splitUrls(value: string): string[] {
  return value
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
}

const retryStrategy = (times: number) => Math.min(times * 200, 2000);

/**
 * Seeds and per-node options of a cluster. Credentials and TLS come from the first seed URL:
 * every node of one cluster shares them.
 */
function clusterOf(target: RedisTarget, options: RedisOptions, clusterOptions: ClusterOptions): Cluster {
  const seeds = target.urls.map((u) => {
    const url = new URL(u);
    return { host: url.hostname, port: Number(url.port || 6379) };
  });
  const first = new URL(target.urls[0]!);
  return new Cluster(seeds, {
    ...clusterOptions,
    clusterRetryStrategy: retryStrategy,
    redisOptions: {
      ...options,
      ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
      ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
      ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
}

/**
 * Request-path connections fail fast: with the offline queue off, a command sent while
 * Redis is unreachable is rejected at once and the caller answers 503 instead of hanging.
 * `pipelined`: the commands of one turn of the event loop (concurrent requests' reads) leave
 * in one write, as one pipeline, instead of a write each; each still answers on its own.
 * Not for a connection BullMQ drives: it runs its own pipelines and transactions.
 */
export function createFailFastRedis(target: RedisTarget, name: string, { pipelined = false } = {}): RedisClient {
  const options = {
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy,
    enableAutoPipelining: pipelined,
  } satisfies RedisOptions;
  if (!target.cluster) return new Redis(target.urls[0]!, options);
  return clusterOf(target, options, { enableOfflineQueue: false, enableAutoPipelining: pipelined });
}

/**
 * Resolves once the client is connected, or after `withinMs` whatever its state: for a
 * first command at start-up, which a fail-fast connection would otherwise refuse while
 * it is still connecting (a warning at every start).
 */
export function connected(client: RedisClient, withinMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, withinMs);
    timer.unref();
    client.once('ready', done);
  });
}

/** BullMQ workers block on Redis and must never give up a command (maxRetriesPerRequest: null). */
export function createWorkerRedis(target: RedisTarget, name: string): RedisClient {
  const options = { connectionName: name, maxRetriesPerRequest: null, retryStrategy } satisfies RedisOptions;
  if (!target.cluster) return new Redis(target.urls[0]!, options);
  return clusterOf(target, options, {});
}

/**
 * A pub/sub connection: commands wait for the connection (offline queue on), and ioredis
 * subscribes again after each reconnection. On a cluster, one sharded subscriber per master.
 */
export function createSubscriberRedis(target: RedisTarget, name: string): RedisClient {
  const options = { connectionName: name, maxRetriesPerRequest: null, retryStrategy } satisfies RedisOptions;
  if (!target.cluster) return new Redis(target.urls[0]!, options);
  return clusterOf(target, options, { shardedSubscribers: true });
}

/** ioredis reconnects by itself; without a listener an error event would crash the process. */
export function onConnectionError(redis: RedisClient, listener: (err: Error) => void): void {
  (redis as EventEmitter).on('error', listener);
}

export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof Cluster;
}

/** The connections that hold the data: the masters of a cluster, or the one server. */
export function mastersOf(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}

/** Readiness: every master answers (a cluster with one master down cannot serve its slots). */
export async function pingAll(redis: RedisClient): Promise<void> {
  if (isCluster(redis) && redis.status !== 'ready') throw new Unavailable(`redis cluster is ${redis.status}`);
  const masters = mastersOf(redis);
  if (masters.length === 0) throw new Unavailable('no redis master reachable');
  await Promise.all(masters.map((m) => m.ping()));
}

/** Resolves once the connection is ready, or rejects after the timeout. */
export async function waitUntilReady(redis: RedisClient, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Unavailable(`redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('ready', onReady);
    };
    redis.on('ready', onReady);
  });
}
