import { isCluster, mastersOf, waitUntilReady, type RedisClient } from './connections.js';
import { keysBySlot } from './slots.js';

/** Every key matching the patterns, walking each master's keyspace with SCAN (never KEYS). */
export async function scanMatching(redis: RedisClient, patterns: readonly string[]): Promise<string[]> {
  // A cluster knows its masters only once connected.
  if (isCluster(redis)) await waitUntilReady(redis);
  const found = new Set<string>();
  for (const node of mastersOf(redis)) {
    for (const pattern of patterns) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 5000);
        for (const key of keys) found.add(key);
        cursor = next;
      } while (cursor !== '0');
    }
  }
  return [...found];
}

/**
 * Deletes every key matching the patterns: found first, then one UNLINK per hash slot (a
 * cluster refuses multi-key commands across slots). All keys of one (board, period) share a
 * slot, so each period disappears in one step, like a flush would take it.
 */
export async function unlinkMatching(redis: RedisClient, patterns: readonly string[]): Promise<void> {
  const keys = await scanMatching(redis, patterns);
  for (const group of isCluster(redis) ? keysBySlot(keys) : [keys]) {
    for (let i = 0; i < group.length; i += 5000) await redis.unlink(...group.slice(i, i + 5000));
  }
}

/** Every key Laurel writes under a prefix: leaderboards and the hash-tagged queues. */
export const keysOfPrefix = (prefix: string) => [`${prefix}:*`, `{${prefix}:*`];

/** The keys of the leaderboard Redis under a prefix (sorted sets, marks, pending keys), never the queues'. */
export const leaderboardKeysOfPrefix = (prefix: string) => [`${prefix}:*`];
