-- Given members' entries in a ranked scope (those ranked).
-- KEYS[1]  scope sorted set, KEYS[2] member state (its index), KEYS[3] the period's ok hash
-- ARGV[1]  category, ARGV[2..] member ids
-- Returns {1, {member, entry, score, ...}}, or {0, rebuilding}.
--@include lib/ready.lua
--@include lib/member-state.lua

local found, entries = {}, {}
for i = 2, #ARGV do
  local member = ARGV[i]
  local state = stateGet(KEYS[2], member)
  if state then
    local _, _, entry = parseState(member, state)
    if entry ~= '' then
      found[#found + 1] = member
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
