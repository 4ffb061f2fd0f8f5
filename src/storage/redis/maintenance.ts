import type { Redis } from 'ioredis';

/** Deletes every key matching the patterns, walking the keyspace with SCAN (never KEYS). */
export async function unlinkMatching(redis: Redis, patterns: readonly string[]): Promise<void> {
  for (const pattern of patterns) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
}

/** Every key Laurel writes under a prefix: leaderboards and the hash-tagged queues. */
export const keysOfPrefix = (prefix: string) => [`${prefix}:*`, `{${prefix}:*`];
