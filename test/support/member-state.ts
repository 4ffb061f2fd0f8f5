import type { RedisClient } from '../../src/storage/redis/connections.js';
import { loadLua } from '../../src/storage/redis/scripts.js';

/** One member's raw state ("version|region|tie") as the scripts find it, or null. */
export async function memberState(redis: RedisClient, index: string, member: string): Promise<string | null> {
  const script = `${loadLua('lib/member-state.lua')}\nreturn stateGet(KEYS[1], ARGV[1])`;
  return (await redis.eval(script, 1, index, member)) as string | null;
}
