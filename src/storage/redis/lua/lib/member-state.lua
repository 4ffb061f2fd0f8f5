-- Shared by project.lua, rebuild-fill.lua, rebuild-replay.lua, rebuild-swap.lua, erase.lua,
-- place.lua, around.lua, watch.lua, targets.lua and pick.lua (included first, before apply-aggregate.lua or
-- entry-of.lua).
-- The per-member state of one category of a family (live: the period base; a rebuild: its
-- temp base) is not one big hash: a big hash costs about 80 bytes a member, its field and
-- value each a separate allocation. It is cut into buckets of consecutive member ids (byte
-- order), each small enough for Redis' listpack encoding (field and value packed in one
-- allocation, about 30 bytes a member), like the leaves of a B-tree:
--   <index>        sorted set (all scores 0) of each bucket's lowest member id; '' is the first
--   <index>:<low>  the bucket from <low> up to the next one: member -> "version|region|tie"
-- A member's bucket is the greatest <low> not above it (one ZRANGE BYLEX, O(log buckets)).
-- A bucket above BUCKET_MAX members splits in two around its middle (Redis orders the ids:
-- Lua's own string order follows the server's locale), so no write grows with the scope.
-- A rebuild fills buckets in member order, FILL_BUCKET at a time: one call per bucket, not
-- per member. The entry is tie .. member ('-' = not ranked): the id is stored once.

local BUCKET_MAX = 128
local FILL_BUCKET = 96
-- Temp buckets of a rebuild that died expire (an abandoned or superseded one removes them at
-- once); a swap refuses a rebuild older than this less an hour, so none has expired yet.
local TEMP_BUCKET_TTL = 86400

local function isTemp(index) return string.find(index, '}:t:', 1, true) ~= nil end

-- The key of the bucket holding `member`, or nil while the state is empty.
local function bucketOf(index, member)
  local low = redis.call('ZRANGE', index, '[' .. member, '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)[1]
  if low == nil then return nil end
  return index .. ':' .. low
end

local function stateGet(index, member)
  local key = bucketOf(index, member)
  if not key then return nil end
  return redis.call('HGET', key, member)
end

-- "version|region|tie" -> version, region, entry ('' when not ranked).
local function parseState(member, state)
  local v, r, t = string.match(state, '^(%d+)|([^|]*)|(.*)$')
  if t == '-' then return tonumber(v), r, '' end
  return tonumber(v), r, t .. member
end

local function stateValue(version, region, member, entry)
  if entry == '' then return version .. '|' .. region .. '|-' end
  return version .. '|' .. region .. '|' .. string.sub(entry, 1, #entry - #member)
end

-- Moves the upper half of a bucket (in byte order, as a sorted set with equal scores orders
-- it) into a new bucket named after its lowest id.
-- The fields from `start` to `stop` (ZRANGE indexes) of `fields` in byte order, sorted by
-- a scratch sorted set next to the index.
local function sortedFields(index, fields, start, stop)
  local scratch = index .. ':~' -- '~' is not allowed in member ids: never a bucket's name
  local args = {}
  for i, f in ipairs(fields) do
    args[2 * i - 1] = 0
    args[2 * i] = f
  end
  redis.call('ZADD', scratch, unpack(args))
  local range = redis.call('ZRANGE', scratch, start, stop)
  redis.call('DEL', scratch)
  return range
end

local function splitBucket(index, key)
  local fields = redis.call('HKEYS', key)
  local upper = sortedFields(index, fields, math.floor(#fields / 2), -1)
  local values = redis.call('HMGET', key, unpack(upper))
  local moved = {}
  for i, f in ipairs(upper) do
    moved[2 * i - 1] = f
    moved[2 * i] = values[i]
  end
  local newKey = index .. ':' .. upper[1]
  redis.call('HSET', newKey, unpack(moved))
  redis.call('HDEL', key, unpack(upper))
  redis.call('ZADD', index, 0, upper[1])
  if isTemp(index) then redis.call('EXPIRE', newKey, TEMP_BUCKET_TTL) end
end

-- key: the member's bucket when the caller has looked it up already.
local function stateSet(index, member, value, key)
  key = key or bucketOf(index, member)
  if not key then
    redis.call('ZADD', index, 0, '')
    key = index .. ':'
  end
  if redis.call('HSET', key, member, value) == 1 then
    local n = redis.call('HLEN', key)
    -- A bucket emptied by erasures vanished with its last field: a temp one comes back with a TTL.
    if n == 1 and isTemp(index) then redis.call('EXPIRE', key, TEMP_BUCKET_TTL) end
    if n > BUCKET_MAX then splitBucket(index, key) end
  end
end

-- A bucket left empty leaves the index too (its range joins the one before), so erasures do
-- not grow the index; the first bucket ('') stays. A bucket is named by its lowest member id,
-- so one whose namesake is deleted (an erasure) is renamed after its lowest remaining id: no
-- key name or index entry keeps the id. Its range then starts there, and ids between fall to
-- the bucket before, which is as correct (a bucket's range is only where lookups start).
local function stateDelete(index, member)
  local key = bucketOf(index, member)
  if not key then return 0 end
  local removed = redis.call('HDEL', key, member)
  if removed == 1 and key == index .. ':' .. member then
    local fields = redis.call('HKEYS', key)
    redis.call('ZREM', index, member)
    if #fields > 0 then
      local lowest = sortedFields(index, fields, 0, 0)[1]
      -- RENAME keeps a temp bucket's TTL; the new name is free (it was in this bucket's range).
      redis.call('RENAME', key, index .. ':' .. lowest)
      redis.call('ZADD', index, 0, lowest)
    end
  elseif removed == 1 and key ~= index .. ':' and redis.call('EXISTS', key) == 0 then
    -- A bucket whose namesake went before this release renamed them, now empty.
    redis.call('ZREM', index, string.sub(key, #index + 2))
  end
  return removed
end
