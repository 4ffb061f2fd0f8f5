-- Given members' entries in a ranked scope (those ranked).
-- KEYS[1]  scope sorted set, KEYS[2] state hash, KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2..] member ids
-- Returns {1, {member, entry, score, ...}}, or {0, rebuilding}.
--@include lib/ready.lua

local members = {}
for i = 2, #ARGV do members[#members + 1] = ARGV[i] end
local states = redis.call('HMGET', KEYS[2], unpack(members))
local found, entries = {}, {}
for i, state in ipairs(states) do
  if state then
    local entry = string.match(state, '^%d+|[^|]*|(.*)$')
    if entry and entry ~= '' then
      found[#found + 1] = members[i]
      entries[#entries + 1] = entry
    end
  end
end
local out = {}
if #entries > 0 then
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(entries))
  for i, score in ipairs(scores) do
    if score then
      out[#out + 1] = found[i]
      out[#out + 1] = entries[i]
      out[#out + 1] = score
    end
  end
end
return {1, out}
