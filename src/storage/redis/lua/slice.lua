-- A page of a ranked scope.
-- KEYS[1]  scope sorted set, KEYS[2] member state (its index; unused), KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2] offset, ARGV[3] limit, ARGV[4] shared flag ('0' no, '1' equal scores share a rank, '2' equal scores and subscores)
-- Returns {1, total, rank offset of the first entry, {entry, score, ...}}, or {0, rebuilding}.
--@include lib/ready.lua
--@include lib/shared-rank.lua

local total = redis.call('ZCARD', KEYS[1])
local offset, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
local items = redis.call('ZRANGE', KEYS[1], offset, offset + limit - 1, 'WITHSCORES')
local first = offset
if ARGV[4] ~= '0' and #items > 0 then
  first = sharedRank0(KEYS[1], ARGV[4], items[2], items[1])
end
return {1, total, first, items}
