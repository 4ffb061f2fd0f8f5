import type { RedisClient } from './connections.js';
import { ENTRY, READY } from './scripts.js';

// KEYS as the other reads (scope, state, ok). ARGV: category, shared, top N, member ids.
// Everything a web process's streams of one scope need after a change, in one call: the
// total, the top N (with the rank offset of its first entry for `shared`), and for each
// watched member its rank0 (-1 when unranked) and sort score. O((N + k) log size).
// Built on first use: READY and ENTRY come from scripts.ts, which registers this one too.
const watchLua = () => `${READY}${ENTRY}
local total = redis.call('ZCARD', KEYS[1])
local shared = ARGV[2] == '1'
local n = tonumber(ARGV[3])
local top, first = {}, 0
if n > 0 then
  top = redis.call('ZRANGE', KEYS[1], 0, n - 1, 'WITHSCORES')
  if shared and #top > 0 then first = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. top[2]) end
end
local placed = {}
for i = 4, #ARGV do
  local rank, score = -1, ''
  local entry = entryOf(ARGV[i])
  if entry then
    score = redis.call('ZSCORE', KEYS[1], entry)
    if shared then rank = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score) else rank = redis.call('ZRANK', KEYS[1], entry) end
  end
  placed[#placed + 1] = rank
  placed[#placed + 1] = score
end
return {1, total, first, top, placed}
`;

export interface WatchCommand {
  laurelWatch(
    scope: string,
    state: string,
    ok: string,
    category: string,
    shared: string,
    topN: number,
    ...members: string[]
  ): Promise<[0, number] | [1, number, number, string[], Array<number | string>]>;
}

export function defineWatchScript(redis: RedisClient): void {
  redis.defineCommand('laurelWatch', { numberOfKeys: 3, lua: watchLua() });
}
