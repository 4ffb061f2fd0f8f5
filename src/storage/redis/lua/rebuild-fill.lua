-- Rebuild, step 2: writes a page of aggregates into the rebuild's temp keys.
-- KEYS[1]  period base
-- ARGV[1]  category, ARGV[2] token, ARGV[3] ttl in seconds
-- ARGV[4..] groups of 5: member, version, score, entry, region (each member once per page)
-- Members a live projection has not touched yet (nearly all of them) are written with a few
-- bulk commands per chunk (HMGET, ZADD, HSET) instead of several calls each; the rest go
-- through apply(), whose versions decide.
-- Returns 0 when a newer rebuild took over, else 1.
--@include lib/apply-aggregate.lua

local base, cat, token = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', base .. ':rb', cat) ~= token then return 0 end
local fam = base .. ':t:' .. token
local stateKey = fam .. ':s:' .. cat
local zprefix = fam .. ':z:' .. cat .. ':'
local count = (#ARGV - 3) / 5
-- unpack() is bounded by Lua's C stack (8000 slots): chunks keep each bulk command under it.
local CHUNK = 1000
for from = 0, count - 1, CHUNK do
  local to = math.min(count, from + CHUNK) - 1
  local members = {}
  for j = from, to do members[#members + 1] = ARGV[4 + j * 5] end
  local states = redis.call('HMGET', stateKey, unpack(members))
  local world, byRegion, regions, hset = {}, {}, {}, {}
  for j = from, to do
    local i = 4 + j * 5
    local member, version, score, entry, region = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    if states[j - from + 1] or version < 1 then
      apply(fam, cat, member, version, score, entry, region)
    else
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
      hset[#hset + 1] = member
      hset[#hset + 1] = ARGV[i + 1] .. '|' .. region .. '|' .. entry
    end
  end
  if #world > 0 then redis.call('ZADD', zprefix .. 'world', unpack(world)) end
  for _, region in ipairs(regions) do redis.call('ZADD', zprefix .. region, unpack(byRegion[region])) end
  if #regions > 0 then redis.call('SADD', fam .. ':rg:' .. cat, unpack(regions)) end
  if #hset > 0 then redis.call('HSET', stateKey, unpack(hset)) end
end
-- A crashed rebuild must not leave its temp keys forever.
local ttl = tonumber(ARGV[3])
for _, key in ipairs({fam .. ':alive', stateKey, zprefix .. 'world', fam .. ':rg:' .. cat}) do
  redis.call('EXPIRE', key, ttl)
end
for _, region in ipairs(redis.call('SMEMBERS', fam .. ':rg:' .. cat)) do
  redis.call('EXPIRE', zprefix .. region, ttl)
end
return 1
