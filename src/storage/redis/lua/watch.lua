-- Everything a web process's streams of one scope need after a change, in one call (docs/design/realtime.md).
-- KEYS[1]  scope sorted set, KEYS[2] member state (its index), KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2] shared flag ('0' no, '1' equal scores share a rank, '2' equal
-- scores and subscores), ARGV[3] top N (0: no top),
-- ARGV[4..] the watched member ids
-- Returns {1, total, rank offset of the first top entry, {entry, score, ...} of the top N,
-- {rank0, score, entry, ...} per watched member (rank0 -1, score and entry '' when unranked)}; or {0, rebuilding}.
-- O((N + k) log size) for k watched members.
--@include lib/ready.lua
--@include lib/member-state.lua
--@include lib/entry-of.lua
--@include lib/shared-rank.lua
--@include lib/placement.lua

local total = redis.call('ZCARD', KEYS[1])
local shared = ARGV[2] ~= '0'
local n = tonumber(ARGV[3])
local top, first = {}, 0
if n > 0 then
  top = redis.call('ZRANGE', KEYS[1], 0, n - 1, 'WITHSCORES')
  if shared and #top > 0 then first = sharedRank0(KEYS[1], ARGV[2], top[2], top[1]) end
end
local placed = {}
for i = 4, #ARGV do
  local rank, score, entry = placementOf(ARGV[i], ARGV[2])
  placed[#placed + 1] = rank
  placed[#placed + 1] = score
  placed[#placed + 1] = entry
end
return {1, total, first, top, placed}
