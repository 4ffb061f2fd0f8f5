import { describe, expect, it } from 'vitest';
import { OutOfMemory, Unavailable } from '../../src/domain/errors.js';
import { storageFailure } from '../../src/storage/failures.js';

/** A connection as storageFailure sees it: only its status matters. */
const ready = { status: 'ready' } as never;

describe('storageFailure', () => {
  it('reads a command lost with its Redis connection as an outage, even once the connection is back', () => {
    for (const message of ['Connection is closed.', "Stream isn't writeable and enableOfflineQueue options is false"])
      expect(storageFailure(new Error(message), { 'queue-redis': ready })).toBeInstanceOf(Unavailable);
  });

  it('leaves a plain bug a bug while every connection is ready', () => {
    expect(storageFailure(new TypeError('x is undefined'), { 'queue-redis': ready })).toBeUndefined();
  });

  it('names the Redis that is not ready, and reads OOM as out of memory', async () => {
    const down = storageFailure(new Error('write failed'), {
      'queue-redis': ready,
      'leaderboard-redis': { status: 'reconnecting' } as never,
    });
    expect(down).toBeInstanceOf(Unavailable);
    expect((down as Unavailable).dependency).toBe('leaderboard-redis');
    const { ReplyError } = await import('ioredis');
    expect(storageFailure(new ReplyError('OOM command not allowed'), { 'queue-redis': ready })).toBeInstanceOf(
      OutOfMemory,
    );
  });
});
