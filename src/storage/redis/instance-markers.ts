import { isCluster, type RedisClient } from './connections.js';
import type { LeaderboardCache } from './leaderboard-cache.js';
import { slotOf } from './slots.js';
import { unlinkMatching } from './maintenance.js';

/**
 * The markers' name carries the key layout: a leaderboard Redis written by an earlier layout
 * (0.2.0 and earlier: one big state hash per category, `:s:<category>`) has no marker of this one, so
 * it is treated like a Redis that lost its data.
 */
const markerBase = (prefix: string) => `${prefix}:lb:layout2`;

/**
 * A leaderboard Redis last used by 0.2.0 or earlier (its workers' markers are there) holds
 * state hashes (`:s:<category>`) the current scripts do not read, under completeness marks
 * that would make them trust an empty member state. Both go, then those markers: a crash
 * before the end repeats the whole cleanup at the next start. Reads then come from Postgres
 * until the start-up rebuild (the current marker is missing too) swaps each scope in.
 * Returns whether there was anything to forget.
 */
export async function forgetEarlierLayout(cache: LeaderboardCache, prefix: string): Promise<boolean> {
  const markers = markerKeys(cache.redis, `${prefix}:lb:instance`);
  // One EXISTS per key: on a cluster they live in different slots.
  const found = await Promise.all(markers.map((marker) => cache.redis.exists(marker)));
  if (!found.some((n) => n > 0)) return false;
  await unlinkMatching(cache.redis, [`${prefix}:lb:{*}:s:*`, `${prefix}:lb:{*}:ok`]);
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
