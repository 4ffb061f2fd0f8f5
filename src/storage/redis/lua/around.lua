-- The entries around one member in a ranked scope.
-- KEYS[1]  scope sorted set, KEYS[2] member state (its index), KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2] member, ARGV[3] radius, ARGV[4] shared flag ('0' no, '1' equal scores share a rank, '2' equal scores and subscores)
-- Returns {1, total} for an unranked member, else {1, total, index of the first entry,
-- rank offset of the first entry, {entry, score, ...}}; or {0, rebuilding}.
--@include lib/ready.lua
--@include lib/member-state.lua
--@include lib/entry-of.lua
--@include lib/shared-rank.lua

local total = redis.call('ZCARD', KEYS[1])
local entry = entryOf(ARGV[2])
if not entry then return {1, total} end
local index = redis.call('ZRANK', KEYS[1], entry)
local radius = tonumber(ARGV[3])
local from = math.max(0, index - radius)
local items = redis.call('ZRANGE', KEYS[1], from, index + radius, 'WITHSCORES')
local first = from
if ARGV[4] ~= '0' and #items > 0 then
  first = sharedRank0(KEYS[1], ARGV[4], items[2], items[1])
end
return {1, total, from, first, items}
