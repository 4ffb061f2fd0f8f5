-- Shared by project.lua, rebuild-replay.lua and rebuild-swap.lua (included after
-- apply-aggregate.lua).
-- While a category is rebuilt, live projections do not write into the rebuild's temp keys
-- directly: the rebuild fills its state buckets in member order, which a write ahead of the
-- fill would break. Each member's newest live aggregate waits in <temp>:pd:<cat>
-- (member -> "version|score|region|entry") and goes through apply() once the fill is done,
-- in bounded steps before the swap and the rest within it. apply() keeps the highest
-- version, so a member both filled and written live ends with the newer aggregate. The first
-- replay marks the fill finished (<temp>:fl:<cat> = FILL_DONE), so no page can come after it.

-- Not a member id ('~' is not allowed in one): what a fill finds once the replay began.
local FILL_DONE = '~done'

-- version: as the projection got it (a string, so no number formatting can change it).
local function pendingAdd(fam, cat, member, version, score, entry, region, ttl)
  local key = fam .. ':pd:' .. cat
  local current = redis.call('HGET', key, member)
  if current and tonumber(string.match(current, '^(%d+)|')) >= tonumber(version) then return end
  redis.call('HSET', key, member, version .. '|' .. score .. '|' .. region .. '|' .. entry)
  redis.call('PEXPIRE', key, ttl)
end

-- The replay creates temp keys the fill may not have (a category without aggregates, a region
-- only live writes have): they expire with the rebuild like the fill's.
local function expireTemp(fam, cat, ttl)
  local prefix = fam .. ':z:' .. cat .. ':'
  for _, key in ipairs({fam .. ':st:' .. cat, prefix .. 'world', fam .. ':rg:' .. cat, fam .. ':fl:' .. cat}) do
    redis.call('PEXPIRE', key, ttl)
  end
  for _, region in ipairs(redis.call('SMEMBERS', fam .. ':rg:' .. cat)) do redis.call('PEXPIRE', prefix .. region, ttl) end
end

-- Replays up to `limit` pending writes (every one when limit is nil); returns how many are left.
local function replayPending(fam, cat, limit)
  redis.call('SET', fam .. ':fl:' .. cat, FILL_DONE, 'KEEPTTL')
  local key = fam .. ':pd:' .. cat
  local rows
  if limit then
    rows = redis.call('HRANDFIELD', key, limit, 'WITHVALUES')
  else
    rows = redis.call('HGETALL', key)
  end
  local done = {}
  for i = 1, #rows, 2 do
    local v, score, region, entry = string.match(rows[i + 1], '^(%d+)|([^|]*)|([^|]*)|(.*)$')
    apply(fam, cat, rows[i], tonumber(v), score, entry, region)
    done[#done + 1] = rows[i]
  end
  -- unpack() is bounded by Lua's C stack (8000 slots).
  for i = 1, #done, 1000 do
    redis.call('HDEL', key, unpack(done, i, math.min(#done, i + 999)))
  end
  return redis.call('HLEN', key)
end
