import type { LeaderboardCache } from './leaderboard-cache.js';
import type { KeyedCommand } from './slots.js';

/**
 * Idempotency keys accepted by intake and not yet applied, each naming its job, in one hash
 * of the leaderboard Redis (GET /v1/events/{key} answers "pending" from it).
 */
export async function markPending(cache: LeaderboardCache, jobId: string, idempotencyKeys: readonly string[]): Promise<void> {
  const fields: string[] = [];
  for (const key of idempotencyKeys) fields.push(key, jobId);
  await cache.redis.hset(cache.keys.pending(), ...fields);
}

/** The job a key was queued in, if intake marked it. */
export async function pendingJobOf(cache: LeaderboardCache, idempotencyKey: string): Promise<string | null> {
  return cache.redis.hget(cache.keys.pending(), idempotencyKey);
}

/** Clears the marks of an applied batch; rides along in the projection's round trip. */
export function clearPendingCommand(cache: LeaderboardCache, idempotencyKeys: readonly string[]): KeyedCommand {
  const key = cache.keys.pending();
  return { key, add: (pipeline) => pipeline.hdel(key, ...idempotencyKeys) };
}
