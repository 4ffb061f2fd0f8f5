-- Rebuild, step 3: replaces the live keys of the category with the temp ones in one step and
-- marks the category complete.
-- KEYS[1]  period base
-- ARGV[1]  category, ARGV[2] token
-- Returns 1; 0 when a newer rebuild took over; -1 when the temp keys expired (a stalled rebuild).

local base, cat, token = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', base .. ':rb', cat) ~= token then return 0 end
local fam = base .. ':t:' .. token
if redis.call('EXISTS', fam .. ':alive') == 0 then return -1 end
redis.call('DEL', fam .. ':alive')
for _, region in ipairs(redis.call('SMEMBERS', base .. ':rg:' .. cat)) do
  redis.call('DEL', base .. ':z:' .. cat .. ':' .. region)
end
redis.call('DEL', base .. ':z:' .. cat .. ':world', base .. ':s:' .. cat, base .. ':rg:' .. cat)
for _, region in ipairs(redis.call('SMEMBERS', fam .. ':rg:' .. cat)) do
  local key = fam .. ':z:' .. cat .. ':' .. region
  if redis.call('EXISTS', key) == 1 then
    redis.call('RENAME', key, base .. ':z:' .. cat .. ':' .. region)
    redis.call('PERSIST', base .. ':z:' .. cat .. ':' .. region)
  end
end
for _, suffix in ipairs({':z:' .. cat .. ':world', ':s:' .. cat, ':rg:' .. cat}) do
  if redis.call('EXISTS', fam .. suffix) == 1 then
    redis.call('RENAME', fam .. suffix, base .. suffix)
    redis.call('PERSIST', base .. suffix)
  end
end
redis.call('HSET', base .. ':ok', cat, '1')
redis.call('HDEL', base .. ':rb', cat)
return 1
