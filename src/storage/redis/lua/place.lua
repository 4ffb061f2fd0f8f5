-- One member's place in a ranked scope.
-- KEYS[1]  scope sorted set, KEYS[2] state hash, KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2] member, ARGV[3] '1' when ties share a rank
-- Returns {1, total} for an unranked member, else {1, total, rank0, score}; or {0, rebuilding}.
--@include lib/ready.lua
--@include lib/entry-of.lua

local total = redis.call('ZCARD', KEYS[1])
local entry = entryOf(ARGV[2])
if not entry then return {1, total} end
local score = redis.call('ZSCORE', KEYS[1], entry)
local rank
if ARGV[3] == '1' then
  rank = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score)
else
  rank = redis.call('ZRANK', KEYS[1], entry)
end
return {1, total, rank, score}
