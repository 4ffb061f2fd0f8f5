import { isCluster, type RedisClient } from './connections.js';
import type { LeaderboardCache } from './leaderboard-cache.js';
import { slotOf } from './slots.js';

/**
 * The markers' name carries the key layout: a leaderboard Redis written by an earlier layout
 * (0.2.0 and earlier: one big state hash per category, `:s:<category>`) has no marker of this one, so
 * it is treated like a Redis that lost its data.
 */
const markerBase = (prefix: string) => `${prefix}:lb:layout2`;

/**
 * Keys an earlier layout leaves behind that the current one would misread: its markers, its
 * state hashes, and the completeness marks (so reads go to Postgres until a rebuild has
 * swapped the current layout in).
 */
export const earlierLayoutPatterns = (prefix: string) => [`${prefix}:lb:instance`, `${prefix}:lb:instance:{*}`, `${prefix}:lb:{*}:s:*`, `${prefix}:lb:{*}:ok`];

/**
 * Sets the "Laurel was here" markers of the leaderboard Redis where they are missing; true
 * when any was missing, i.e. the Redis (or, on a cluster, one of its masters) is new or lost
 * its data.
 */
export async function claimInstanceMarkers(cache: LeaderboardCache, prefix: string, now: string): Promise<boolean> {
  const markers = markerKeys(cache.redis, markerBase(prefix));
  const created = await Promise.all(markers.map((marker) => cache.redis.set(marker, now, 'NX')));
  return created.includes('OK');
}

export async function releaseInstanceMarkers(cache: LeaderboardCache, prefix: string): Promise<void> {
  await Promise.all(markerKeys(cache.redis, markerBase(prefix)).map((marker) => cache.redis.del(marker)));
}

/**
 * The marker keys: one on a standalone Redis; on a cluster one per master, each with a hash
 * tag that lands in a slot that master serves.
 */
function markerKeys(redis: RedisClient, base: string): string[] {
  if (!isCluster(redis)) return [base];
  const owners = new Set(redis.nodes('master').map((n) => `${n.options.host}:${n.options.port}`));
  const keys: string[] = [];
  for (let tag = 0; owners.size > 0 && tag < 100_000; tag += 1) {
    const key = `${base}:{${tag}}`;
    const owner = redis.slots[slotOf(key)]?.[0];
    if (owner && owners.delete(owner)) keys.push(key);
  }
  return keys;
}
