-- Shared by slice.lua, place.lua, around.lua, watch.lua and targets.lua (included). sharedRank0(key, flag, score, entry):
-- under `shared`, how many entries of the sorted set `key` rank strictly ahead of `entry`
-- (whose score is `score`). flag '1': ties are equal scores, so it is a ZCOUNT of better
-- scores. flag '2' (a board with a subscore): ties are equal scores with an equal 13-digit
-- subscore key in front of the entry; entries of one score are in byte order, so a binary
-- search by rank among them finds the first with this key: O(log N * log ties).

local SUBSCORE_WIDTH = 13

local function sharedRank0(key, flag, score, entry)
  local below = redis.call('ZCOUNT', key, '-inf', '(' .. score)
  if flag ~= '2' then return below end
  local mine = string.sub(entry, 1, SUBSCORE_WIDTH)
  local lo, hi = 0, redis.call('ZCOUNT', key, score, score)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local at = redis.call('ZRANGE', key, below + mid, below + mid)[1]
    if string.sub(at, 1, SUBSCORE_WIDTH) < mine then lo = mid + 1 else hi = mid end
  end
  return below + lo
end
