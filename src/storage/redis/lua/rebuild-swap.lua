-- Rebuild, step 4: replays the last live writes, then replaces the live keys of the category
-- with the temp ones in one step and marks the category complete.
-- KEYS[1]  period base
-- ARGV[1]  category, ARGV[2] token
-- Returns 1; 0 when a newer rebuild took over; -1 when the temp keys expired or may have
-- started to (a stalled rebuild).
-- O(buckets + waiting live writes), never O(members): the old keys are unlinked (freed off the
-- main thread) and each state bucket is renamed, one per about 100 members.
--@include lib/member-state.lua
--@include lib/apply-aggregate.lua
--@include lib/rebuild-pending.lua

local base, cat, token = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', base .. ':rb', cat) ~= token then return 0 end
local fam = base .. ':t:' .. token
local began = redis.call('GET', fam .. ':alive')
if not began then return -1 end
if tonumber(redis.call('TIME')[1]) - tonumber(began) > TEMP_BUCKET_TTL - 3600 then return -1 end
replayPending(fam, cat, nil)
redis.call('DEL', fam .. ':alive', fam .. ':pd:' .. cat, fam .. ':fl:' .. cat)
for _, region in ipairs(redis.call('SMEMBERS', base .. ':rg:' .. cat)) do
  redis.call('UNLINK', base .. ':z:' .. cat .. ':' .. region)
end
local live, temp = base .. ':st:' .. cat, fam .. ':st:' .. cat
for _, low in ipairs(redis.call('ZRANGE', live, 0, -1)) do redis.call('UNLINK', live .. ':' .. low) end
redis.call('UNLINK', base .. ':z:' .. cat .. ':world', live, base .. ':rg:' .. cat)
for _, region in ipairs(redis.call('SMEMBERS', fam .. ':rg:' .. cat)) do
  local key = fam .. ':z:' .. cat .. ':' .. region
  if redis.call('EXISTS', key) == 1 then
    redis.call('RENAME', key, base .. ':z:' .. cat .. ':' .. region)
    redis.call('PERSIST', base .. ':z:' .. cat .. ':' .. region)
  end
end
for _, low in ipairs(redis.call('ZRANGE', temp, 0, -1)) do
  if redis.call('EXISTS', temp .. ':' .. low) == 1 then
    redis.call('RENAME', temp .. ':' .. low, live .. ':' .. low)
    redis.call('PERSIST', live .. ':' .. low)
  end
end
for _, suffix in ipairs({':z:' .. cat .. ':world', ':st:' .. cat, ':rg:' .. cat}) do
  if redis.call('EXISTS', fam .. suffix) == 1 then
    redis.call('RENAME', fam .. suffix, base .. suffix)
    redis.call('PERSIST', base .. suffix)
  end
end
redis.call('HSET', base .. ':ok', cat, '1')
redis.call('HDEL', base .. ':rb', cat)
return 1
