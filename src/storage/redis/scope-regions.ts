import type { LeaderboardCache } from './leaderboard-cache.js';

/** The regions of a category that Redis holds a sorted set for. */
export async function cachedRegions(
  cache: LeaderboardCache,
  ref: { board: string; period: string; category: string },
): Promise<string[]> {
  return cache.redis.smembers(cache.keys.regions(ref.board, ref.period, ref.category));
}
