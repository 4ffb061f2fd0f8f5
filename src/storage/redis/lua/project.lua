-- Projects aggregates (from laurel_apply_batch) into the live keys of one period.
-- KEYS[1]  period base (every key derived from it shares its hash tag: one cluster slot)
-- ARGV[1]  categories to mark complete first, "," separated ('' for none): those of a period
--          this batch created, which Redis then holds whole by construction
-- ARGV[2..] groups of 6: category, member, version, score, entry, region
--          (entry '' = not ranked, region '' = no region scope)
-- While a category is being rebuilt, the aggregate also goes into the rebuild's temp keys,
-- so the swap loses nothing.
-- Returns the categories that are neither known to be complete nor being rebuilt.
--@include lib/apply-aggregate.lua

local base = KEYS[1]
if ARGV[1] ~= '' then
  for cat in string.gmatch(ARGV[1], '[^,]+') do redis.call('HSET', base .. ':ok', cat, '1') end
end
local missing, seen = {}, {}
for i = 2, #ARGV, 6 do
  local cat, member, version = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local score, entry, region = ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  apply(base, cat, member, version, score, entry, region)
  local token = redis.call('HGET', base .. ':rb', cat)
  if token then
    local fam = base .. ':t:' .. token
    local ttl = redis.call('PTTL', fam .. ':alive')
    -- Only a live rebuild gets the write, and its temp keys expire with it.
    if ttl > 0 then
      apply(fam, cat, member, version, score, entry, region)
      for _, key in ipairs({fam .. ':s:' .. cat, fam .. ':z:' .. cat .. ':world', fam .. ':rg:' .. cat}) do
        redis.call('PEXPIRE', key, ttl)
      end
      if region ~= '' then redis.call('PEXPIRE', fam .. ':z:' .. cat .. ':' .. region, ttl) end
    end
  end
  if not seen[cat] and redis.call('HEXISTS', base .. ':ok', cat) == 0 and not rebuilding(base, cat) then
    missing[#missing + 1] = cat
  end
  seen[cat] = true
end
return missing
