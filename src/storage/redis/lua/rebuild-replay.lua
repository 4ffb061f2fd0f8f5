-- Rebuild, step 3: replays live writes that arrived during the fill into the temp keys, a
-- bounded number per call, so the swap is left with few.
-- KEYS[1]  period base
-- ARGV[1]  category, ARGV[2] token, ARGV[3] at most this many members
-- Returns how many live writes still wait; -1 when a newer rebuild took over, -2 when the
-- rebuild's temp keys expired (a stalled rebuild).
--@include lib/member-state.lua
--@include lib/apply-aggregate.lua
--@include lib/rebuild-pending.lua

local base, cat, token = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', base .. ':rb', cat) ~= token then return -1 end
local fam = base .. ':t:' .. token
local ttl = redis.call('PTTL', fam .. ':alive')
if ttl <= 0 then return -2 end
local left = replayPending(fam, cat, tonumber(ARGV[3]))
expireTemp(fam, cat, ttl)
return left
