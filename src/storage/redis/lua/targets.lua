-- What the goals and cutoffs reads are made of, at one moment: one member's place and the
-- entry just above it in the listing order, the entries at given positions and at given
-- fractions of the total, and given members' places.
-- KEYS[1]  scope sorted set, KEYS[2] member state (its index), KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2] shared flag ('0' no, '1' equal scores share a rank, '2' equal
-- scores and subscores), ARGV[3] the member ('' for none), ARGV[4] n, then n 1-based
-- positions, then m, then m pairs (numerator, denominator) each naming the position
-- max(1, ceil(total * numerator / denominator)), then the ids of the members to place.
-- Returns {1, total, own, above, positions, fractions, placed}: `own` and `placed` are
-- {rank0, score, entry} per member (-1, '', '' when unranked); `above` the same for the
-- entry above the member (-1, '', '' at the top, for an unranked member or none); `positions`
-- {score, entry} per position and `fractions` {position, score, entry} per fraction ('', ''
-- past the end): an entry at a position needs no rank of its own (the position is its
-- place), so none is counted; or {0, rebuilding}.
-- O((p + f + k) log size) for p positions, f fractions and k members.
--@include lib/ready.lua
--@include lib/member-state.lua
--@include lib/entry-of.lua
--@include lib/shared-rank.lua
--@include lib/placement.lua

local total = redis.call('ZCARD', KEYS[1])
local flag = ARGV[2]

local function push(out, rank, score, entry)
  table.insert(out, rank)
  table.insert(out, score)
  table.insert(out, entry)
end

-- The entry at 0-based index i, flattened into `out`: rank offset, score, entry.
local function pushAt(out, i)
  local item = {}
  if i >= 0 then item = redis.call('ZRANGE', KEYS[1], i, i, 'WITHSCORES') end
  if #item == 0 then return push(out, -1, '', '') end
  local rank = i
  if flag ~= '0' then rank = sharedRank0(KEYS[1], flag, item[2], item[1]) end
  push(out, rank, item[2], item[1])
end

-- The score and entry at 0-based index i, flattened into `out` ('', '' past the end).
local function pushEntryAt(out, i)
  local item = redis.call('ZRANGE', KEYS[1], i, i, 'WITHSCORES')
  table.insert(out, item[2] or '')
  table.insert(out, item[1] or '')
end

local own, above = {-1, '', ''}, {-1, '', ''}
if ARGV[3] ~= '' then
  local rank, score, entry = placementOf(ARGV[3], flag)
  own = {rank, score, entry}
  if rank >= 0 then
    above = {}
    pushAt(above, redis.call('ZRANK', KEYS[1], entry) - 1)
  end
end

local at = 4
local positions = {}
for i = at + 1, at + tonumber(ARGV[at]) do pushEntryAt(positions, tonumber(ARGV[i]) - 1) end
at = at + tonumber(ARGV[at]) + 1

local fractions = {}
for i = 1, tonumber(ARGV[at]) do
  local numerator, denominator = tonumber(ARGV[at + 2 * i - 1]), tonumber(ARGV[at + 2 * i])
  -- An exact ceiling: total * numerator stays below 2^53 (at most 4 decimals of a percent).
  local position = math.max(1, math.floor((total * numerator + denominator - 1) / denominator))
  table.insert(fractions, position)
  pushEntryAt(fractions, position - 1)
end
at = at + 2 * tonumber(ARGV[at]) + 1

local placed = {}
for i = at, #ARGV do
  push(placed, placementOf(ARGV[i], flag))
end
return {1, total, own, above, positions, fractions, placed}
