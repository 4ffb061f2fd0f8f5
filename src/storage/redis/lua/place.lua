-- One member's place in a ranked scope.
-- KEYS[1]  scope sorted set, KEYS[2] member state (its index), KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2] member, ARGV[3] shared flag ('0' no, '1' equal scores share a rank, '2' equal scores and subscores)
-- Returns {1, total} for an unranked member, else {1, total, rank0, score, entry}; or {0, rebuilding}.
--@include lib/ready.lua
--@include lib/member-state.lua
--@include lib/entry-of.lua
--@include lib/shared-rank.lua
--@include lib/placement.lua

local total = redis.call('ZCARD', KEYS[1])
local rank, score, entry = placementOf(ARGV[2], ARGV[3])
if rank < 0 then return {1, total} end
return {1, total, rank, score, entry}
