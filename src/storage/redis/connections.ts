import { Redis, type RedisOptions } from 'ioredis';

/**
 * Request-path connections fail fast: with the offline queue off, a command sent while
 * Redis is unreachable is rejected at once and the caller answers 503 instead of hanging.
 */
export function createFailFastRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  } satisfies RedisOptions);
}

/** BullMQ workers block on Redis and must never give up a command (maxRetriesPerRequest: null). */
export function createWorkerRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}

/** Resolves once the connection is ready, or rejects after the timeout. */
export async function waitUntilReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`redis not ready after ${timeoutMs} ms`));
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
