-- Everything a web process's streams of one scope need after a change, in one call (SPEC §9.5).
-- KEYS[1]  scope sorted set, KEYS[2] state hash, KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2] '1' when ties share a rank, ARGV[3] top N (0: no top),
-- ARGV[4..] the watched member ids
-- Returns {1, total, rank offset of the first top entry, {entry, score, ...} of the top N,
-- {rank0, score, ...} per watched member (rank0 -1 and score '' when unranked)}; or {0, rebuilding}.
-- O((N + k) log size) for k watched members.
--@include lib/ready.lua
--@include lib/entry-of.lua

local total = redis.call('ZCARD', KEYS[1])
local shared = ARGV[2] == '1'
local n = tonumber(ARGV[3])
local top, first = {}, 0
if n > 0 then
  top = redis.call('ZRANGE', KEYS[1], 0, n - 1, 'WITHSCORES')
  if shared and #top > 0 then first = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. top[2]) end
end
local placed = {}
for i = 4, #ARGV do
  local rank, score = -1, ''
  local entry = entryOf(ARGV[i])
  if entry then
    score = redis.call('ZSCORE', KEYS[1], entry)
    if shared then rank = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score) else rank = redis.call('ZRANK', KEYS[1], entry) end
  end
  placed[#placed + 1] = rank
  placed[#placed + 1] = score
end
return {1, total, first, top, placed}
