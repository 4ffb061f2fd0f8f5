import type { Env } from '../../config/env.js';
import type { RedisClient } from './connections.js';
import { leaderboardTarget, queueTarget } from './connections.js';
import type { LeaderboardCache } from './leaderboard-cache.js';
import type { KeyedCommand } from './slots.js';

/** An event's identity as a pending mark's field: `<board>|<key>` (board ids never hold '|'). */
export interface EventIdentity {
  board: string;
  key: string;
}
const field = (e: EventIdentity) => `${e.board}|${e.key}`;

/**
 * Events accepted by intake and not yet applied, each naming its job, in one hash of the
 * leaderboard Redis (GET /v1/events/{key} answers "pending" from it), one field per
 * (board, key). Sent through `connection` (the leaderboard's own by default).
 */
export async function markPending(
  cache: LeaderboardCache,
  jobId: string,
  events: readonly EventIdentity[],
  connection: RedisClient = cache.redis,
): Promise<void> {
  const fields: string[] = [];
  for (const e of events) fields.push(field(e), jobId);
  await connection.hset(cache.keys.pending(), ...fields);
}

/**
 * The queue's connection when the leaderboard Redis is the queue Redis itself (no
 * LEADERBOARD_REDIS_URL) and not a cluster: a mark sent there just before the job add is run
 * before it (one connection's commands run in order), so the two share one round trip. Null
 * otherwise: on two servers, or across a cluster's nodes, the mark must be answered first.
 */
export function markRidesWithJobAdd(env: Env, queueRedis: RedisClient): RedisClient | null {
  const queue = queueTarget(env);
  const leaderboard = leaderboardTarget(env);
  const same = !queue.cluster && !leaderboard.cluster && queue.urls.join(',') === leaderboard.urls.join(',');
  return same ? queueRedis : null;
}

/**
 * The job an event was queued in, if intake marked it. A web process of release 0.2 marks
 * the plain key (until the rolling deploy ends): that field is the fallback, and the caller
 * checks the queued event's board.
 */
export async function pendingJobOf(cache: LeaderboardCache, event: EventIdentity): Promise<string | null> {
  const [mine, plain] = await cache.redis.hmget(cache.keys.pending(), field(event), event.key);
  return mine ?? plain ?? null;
}

/** Which of the boards hold a pending mark of the key: one HMGET. */
export async function boardsPendingWith(
  cache: LeaderboardCache,
  key: string,
  boards: readonly string[],
): Promise<string[]> {
  if (boards.length === 0) return [];
  const jobs = await cache.redis.hmget(cache.keys.pending(), ...boards.map((board) => field({ board, key })));
  return boards.filter((_, i) => jobs[i] !== null);
}

/** Clears the marks of an applied batch; rides along in the projection's round trip. */
export function clearPendingCommand(cache: LeaderboardCache, events: readonly EventIdentity[]): KeyedCommand {
  const key = cache.keys.pending();
  // The plain key too: the mark of a web process of release 0.2, which would otherwise stay.
  return { key, add: (pipeline) => pipeline.hdel(key, ...events.flatMap((e) => [field(e), e.key])) };
}
