import { ReplyError } from 'ioredis';
import { LaurelError, OutOfMemory, Unavailable, type Dependency } from '../domain/errors.js';
import { isPostgresOutageCode, unstorableTextError } from './postgres/pg-errors.js';
import type { RedisClient } from './redis/connections.js';

/** Node's codes for a connection that could not be made or was lost. */
const SOCKET_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

function isSocketError(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === 'string' && SOCKET_ERROR_CODES.has(code) && 'syscall' in err;
}

/**
 * What ioredis rejects a command with when its connection was lost (or is not writable and
 * has no offline queue): plain Errors, told apart by their text alone. By the time the error
 * is read the connection may be ready again, so the text is what marks the outage.
 */
const REDIS_CONNECTION_LOST: ReadonlySet<string> = new Set([
  'Connection is closed.',
  "Stream isn't writeable and enableOfflineQueue options is false",
]);

/** Redis' answer to a write over maxmemory under `noeviction`; the error's code is its first word. */
const REDIS_OUT_OF_MEMORY = 'OOM';

function isRedisOutOfMemory(err: Error): boolean {
  return err instanceof ReplyError && err.message.split(' ', 1)[0] === REDIS_OUT_OF_MEMORY;
}

/** The Redis connections a process has, by the name logs and readiness give them. */
export type RedisClients = Partial<Record<Extract<Dependency, 'queue-redis' | 'leaderboard-redis'>, RedisClient>>;

/**
 * Translates what a storage driver threw into Laurel's own errors, or undefined for a bug.
 * An outage is recognised by class and code: Unavailable (the Postgres pool wraps the
 * driver's connection failures in it, see database.ts), Postgres' connection SQLSTATEs, a
 * socket error, ioredis giving up on a command (MaxRetriesPerRequestError), or, since ioredis
 * reports a lost connection as a plain Error, any non-reply error while one of our Redis
 * connections is not ready (that connection is then the dependency named). Redis refusing a
 * write for want of memory is OutOfMemory.
 */
export function storageFailure(err: unknown, redisClients: RedisClients): LaurelError | undefined {
  if (err instanceof LaurelError) return err;
  if (!(err instanceof Error)) return undefined;
  // Defence in depth: validation refuses such text before it reaches Postgres.
  const unstorable = unstorableTextError(err);
  if (unstorable) return unstorable;
  if (isRedisOutOfMemory(err))
    return new OutOfMemory(`Redis is out of memory: ${err.message}`, undefined, { cause: err });
  const notReady = (Object.entries(redisClients) as Array<[Dependency, RedisClient]>).find(
    ([, c]) => c.status !== 'ready',
  )?.[0];
  const redisDown = !(err instanceof ReplyError) && (notReady !== undefined || REDIS_CONNECTION_LOST.has(err.message));
  if (isPostgresOutageCode(err) || isSocketError(err) || err.name === 'MaxRetriesPerRequestError' || redisDown) {
    // A connection SQLSTATE is Postgres'; otherwise the Redis connection that is down, if any.
    const dependency: Dependency | undefined = isPostgresOutageCode(err) ? 'postgres' : notReady;
    return new Unavailable(`a dependency is unavailable: ${err.message}`, undefined, {
      cause: err,
      ...(dependency ? { dependency } : {}),
    });
  }
  return undefined;
}
