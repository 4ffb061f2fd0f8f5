-- Projects aggregates (from laurel_apply_batch) into the live keys of one period.
-- KEYS[1]  period base (every key derived from it shares its hash tag: one cluster slot)
-- ARGV[1]  categories to mark complete first, "," separated ('' for none): those of a period
--          this batch created, which Redis then holds whole by construction
-- ARGV[2..] groups of 6: category, member, version, score, entry, region
--          (entry '' = not ranked, region '' = no region scope)
-- While a category is being rebuilt, the aggregate also waits for the rebuild to replay it
-- (lib/rebuild-pending.lua), so the swap loses nothing.
-- A state hash of layout 1 (0.2.0's `:s:<category>`) beside a category means a process of that
-- release still writes here: it goes with the category's completeness mark (its entries may be
-- wrong), and the reply says so, so the caller can hold the cache off until that writer stops.
-- Returns 1 if such a hash was found (else 0), then the categories that are neither known to
-- be complete nor being rebuilt.
--@include lib/member-state.lua
--@include lib/apply-aggregate.lua
--@include lib/rebuild-pending.lua

local base = KEYS[1]
if ARGV[1] ~= '' then
  for cat in string.gmatch(ARGV[1], '[^,]+') do redis.call('HSET', base .. ':ok', cat, '1') end
end
local missing, seen, earlier = {}, {}, 0
for i = 2, #ARGV, 6 do
  local cat, member, version = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local score, entry, region = ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  apply(base, cat, member, version, score, entry, region)
  local token = redis.call('HGET', base .. ':rb', cat)
  if token then
    local fam = base .. ':t:' .. token
    local ttl = redis.call('PTTL', fam .. ':alive')
    -- Only a live rebuild gets the write, and it expires with it.
    if ttl > 0 then pendingAdd(fam, cat, member, ARGV[i + 2], score, entry, region, ttl) end
  end
  if not seen[cat] and redis.call('UNLINK', base .. ':s:' .. cat) == 1 then
    redis.call('HDEL', base .. ':ok', cat)
    earlier = 1
  end
  if not seen[cat] and redis.call('HEXISTS', base .. ':ok', cat) == 0 and not rebuilding(base, cat) then
    missing[#missing + 1] = cat
  end
  seen[cat] = true
end
table.insert(missing, 1, earlier)
return missing
