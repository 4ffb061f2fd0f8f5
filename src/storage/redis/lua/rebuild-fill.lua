-- Rebuild, step 2: writes a page of aggregates into the rebuild's temp keys.
-- KEYS[1]  period base
-- ARGV[1]  category, ARGV[2] token, ARGV[3] ttl in seconds, ARGV[4] the last member id of
--          the page before ('' for the first page)
-- ARGV[5..] groups of 5: member, version, score, entry, region, in ascending byte order of
--          member ids within and across pages (the writer checks it), each member once
-- Only fills write the temp member state until they are done (live writes wait, see
-- lib/rebuild-pending.lua; an erasure only removes), so every member is new there and comes
-- after all the others: it goes at the end of the last bucket, and a new bucket starts every
-- FILL_BUCKET members. A few bulk commands per chunk (ZADD, one HSET per bucket), never one
-- per member.
-- The last member filled is kept (<temp>:fl:<cat>): a page is written only after the one it
-- names as before, and a page sent again (a client resending after a dropped connection) is
-- recognised and not written twice.
-- Returns 0 when a newer rebuild took over, else 1; an error for a page out of turn.
--@include lib/member-state.lua

local base, cat, token = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', base .. ':rb', cat) ~= token then return 0 end
local fam = base .. ':t:' .. token
local index = fam .. ':st:' .. cat
local zprefix = fam .. ':z:' .. cat .. ':'
local ttl = tonumber(ARGV[3])
local count = (#ARGV - 4) / 5
local filledKey = fam .. ':fl:' .. cat
local filled = redis.call('GET', filledKey) or ''
if count > 0 and filled == ARGV[5 + (count - 1) * 5] then return 1 end
if filled ~= ARGV[4] then
  return redis.error_reply('rebuild page out of turn: filled up to "' .. filled .. '", page after "' .. ARGV[4] .. '"')
end

local last = redis.call('ZRANGE', index, -1, -1)[1]
local bucket, size = nil, 0
if last then
  bucket = index .. ':' .. last
  size = redis.call('HLEN', bucket)
end
local rows, lows = {}, {}
local function flush()
  if #rows == 0 then return end
  redis.call('HSET', bucket, unpack(rows))
  redis.call('EXPIRE', bucket, TEMP_BUCKET_TTL)
  rows = {}
end

-- unpack() is bounded by Lua's C stack (8000 slots): chunks keep each bulk command under it.
local CHUNK = 1000
for from = 0, count - 1, CHUNK do
  local to = math.min(count, from + CHUNK) - 1
  local world, byRegion, regions = {}, {}, {}
  for j = from, to do
    local i = 5 + j * 5
    local member, version, score, entry, region = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    if tonumber(version) >= 1 then
      if entry ~= '' then
        world[#world + 1] = score
        world[#world + 1] = entry
        if region ~= '' then
          local r = byRegion[region]
          if not r then
            r = {}
            byRegion[region] = r
            regions[#regions + 1] = region
          end
          r[#r + 1] = score
          r[#r + 1] = entry
        end
      end
      if not bucket or size >= FILL_BUCKET then
        flush()
        -- The first bucket starts at '' so that it holds anything below its first member.
        local low = bucket and member or ''
        lows[#lows + 1] = 0
        lows[#lows + 1] = low
        bucket, size = index .. ':' .. low, 0
      end
      rows[#rows + 1] = member
      rows[#rows + 1] = stateValue(version, region, member, entry)
      size = size + 1
    end
  end
  if #world > 0 then redis.call('ZADD', zprefix .. 'world', unpack(world)) end
  for _, region in ipairs(regions) do redis.call('ZADD', zprefix .. region, unpack(byRegion[region])) end
  if #regions > 0 then redis.call('SADD', fam .. ':rg:' .. cat, unpack(regions)) end
  flush()
end
for i = 1, #lows, 2000 do
  redis.call('ZADD', index, unpack(lows, i, math.min(#lows, i + 1999)))
end
if count > 0 then redis.call('SET', filledKey, ARGV[5 + (count - 1) * 5]) end
-- A crashed rebuild must not leave its temp keys forever (its buckets expire on their own).
for _, key in ipairs({fam .. ':alive', index, zprefix .. 'world', fam .. ':rg:' .. cat, fam .. ':pd:' .. cat, filledKey}) do
  redis.call('EXPIRE', key, ttl)
end
for _, region in ipairs(redis.call('SMEMBERS', fam .. ':rg:' .. cat)) do
  redis.call('EXPIRE', zprefix .. region, ttl)
end
return 1
