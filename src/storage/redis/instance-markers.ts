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
 * Removes 0.2.0's "Laurel was here" markers and says whether there were any: the leaderboard
 * Redis was last used by 0.2.0 or earlier, and may still be (a rolling upgrade). Its state
 * hashes (`:s:<category>`) and completeness marks are left to the key layout handover
 * (services/key-layout-watch.ts), which waits until no 0.2.0 process writes any more.
 */
export async function takeEarlierLayoutMarkers(
  cache: LeaderboardCache,
  prefix: string,
  /** Runs between finding and removing them: a failure keeps them for the next attempt. */
  found: () => Promise<void>,
): Promise<boolean> {
  const markers = markerKeys(cache.redis, `${prefix}:lb:instance`);
  // One EXISTS per key: on a cluster they live in different slots.
  const present = await Promise.all(markers.map((marker) => cache.redis.exists(marker)));
  if (!present.some((n) => n > 0)) return false;
  await found();
  await Promise.all(markers.map((marker) => cache.redis.del(marker)));
  return true;
}

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
