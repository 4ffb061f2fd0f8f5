import { ReplyError } from 'ioredis';
import { InvalidInput, LaurelError, Unavailable } from '../domain/errors.js';
import { isPostgresOutageCode, isUnstorableText } from './postgres/pg-errors.js';
import type { RedisClient } from './redis/connections.js';

/** Node's codes for a connection that could not be made or was lost. */
const SOCKET_ERROR_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

function isSocketError(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === 'string' && SOCKET_ERROR_CODES.has(code) && 'syscall' in err;
}

/**
 * Translates what a storage driver threw into Laurel's own errors, or undefined for a bug.
 * An outage is recognised by class and code: Unavailable (the Postgres pool wraps the
 * driver's connection failures in it, see database.ts), Postgres' connection SQLSTATEs, a
 * socket error, ioredis giving up on a command (MaxRetriesPerRequestError), or, since ioredis
 * reports a lost connection as a plain Error, any non-reply error while one of our Redis
 * connections is not ready.
 */
export function storageFailure(err: unknown, redisClients: readonly RedisClient[]): LaurelError | undefined {
  if (err instanceof LaurelError) return err;
  if (!(err instanceof Error)) return undefined;
  if (isUnstorableText(err)) {
    // Defence in depth: validation refuses such text before it reaches Postgres.
    return new InvalidInput('the request contains text Postgres cannot store (NUL or invalid UTF-8)', [], 'invalid_text');
  }
  const redisDown = !(err instanceof ReplyError) && redisClients.some((c) => c.status !== 'ready');
  if (isPostgresOutageCode(err) || isSocketError(err) || err.name === 'MaxRetriesPerRequestError' || redisDown) {
    return new Unavailable(`a dependency is unavailable: ${err.message}`, undefined, { cause: err });
  }
  return undefined;
}
