import type { RedisClient } from './connections.js';

/** Bucket names per ZRANGE step: no command grows with the scope. */
const STEP = 500;

/**
 * Every bucket key of a category's member state (lua/lib/member-state.lua: `<index>:<low>`
 * for each lowest member id `<low>` in the index), read in bounded steps.
 */
export async function* stateBuckets(redis: RedisClient, index: string): AsyncGenerator<string[]> {
  for (let from = 0; ; from += STEP) {
    const lows = await redis.zrange(index, String(from), String(from + STEP - 1));
    if (lows.length > 0) yield lows.map((low) => `${index}:${low}`);
    if (lows.length < STEP) return;
  }
}
