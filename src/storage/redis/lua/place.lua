-- One member's place in a ranked scope.
-- KEYS[1]  scope sorted set, KEYS[2] member state (its index), KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2] member, ARGV[3] shared flag ('0' no, '1' equal scores share a rank, '2' equal scores and subscores)
-- Returns {1, total} for an unranked member, else {1, total, rank0, score, entry}; or {0, rebuilding}.
--@include lib/ready.lua
--@include lib/member-state.lua
--@include lib/entry-of.lua
--@include lib/shared-rank.lua

local total = redis.call('ZCARD', KEYS[1])
local entry = entryOf(ARGV[2])
if not entry then return {1, total} end
local score = redis.call('ZSCORE', KEYS[1], entry)
local rank
if ARGV[3] ~= '0' then
  rank = sharedRank0(KEYS[1], ARGV[3], score, entry)
else
  rank = redis.call('ZRANK', KEYS[1], entry)
end
return {1, total, rank, score, entry}
