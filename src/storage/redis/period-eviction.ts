import type { RedisClient } from './connections.js';
import type { LeaderboardKeys } from './leaderboard-keys.js';
import { WORLD } from '../../domain/ids.js';
import { stateBuckets } from './member-state.js';
import { unlinkRebuildTemp } from './scope-rebuild.js';

/** Keys per UNLINK and region codes per SSCAN step: no command grows with the period. */
const STEP = 500;

/**
 * Removes every leaderboard key of one (board, period) in bounded steps. The `ok` hash goes
 * first, so whatever is left after a crash mid-way is an incomplete period, never one that
 * looks complete. UNLINK frees a big sorted set or hash in Redis' background thread, so even
 * a million-member scope costs the server O(1) per key on its main thread. All keys share
 * the period's hash tag, so each UNLINK stays in one cluster slot. Returns the keys named.
 */
export async function unlinkPeriodKeys(
  redis: RedisClient,
  keys: LeaderboardKeys,
  ref: { board: string; period: string; categories: readonly string[] },
): Promise<number> {
  const base = keys.period(ref.board, ref.period);
  // A rebuild registered now can no longer swap: its temp keys go too (after `rb`, which
  // names them, so nothing new starts writing there meanwhile).
  const rebuilds = await redis.hgetall(`${base}:rb`);
  await redis.unlink(keys.ok(ref.board, ref.period), `${base}:rb`);
  for (const [category, token] of Object.entries(rebuilds)) await unlinkRebuildTemp(redis, base, category, token);
  let named = 2;
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    named += batch.length;
    await redis.unlink(...batch);
    batch = [];
  };
  const add = async (key: string) => {
    batch.push(key);
    if (batch.length >= STEP) await flush();
  };
  for (const category of ref.categories) {
    const regionSet = `${base}:rg:${category}`;
    let cursor = '0';
    do {
      const [next, regions] = await redis.sscan(regionSet, cursor, 'COUNT', STEP);
      for (const region of regions) await add(keys.scope(ref.board, ref.period, category, region));
      cursor = next;
    } while (cursor !== '0');
    await add(keys.scope(ref.board, ref.period, category, WORLD));
    // The state buckets, then their index (which names them, if this is interrupted).
    const state = keys.state(ref.board, ref.period, category);
    for await (const buckets of stateBuckets(redis, state)) for (const bucket of buckets) await add(bucket);
    await flush();
    await add(state);
    // The region set last: it is what names the region scopes if this is interrupted.
    await flush();
    await add(regionSet);
  }
  await flush();
  return named;
}
