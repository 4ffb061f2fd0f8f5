-- Removes one member from every given category of one period (erasure, docs/api.md): their
-- entries leave the world and region sets and their state goes, in the live keys and in a
-- running rebuild's temp keys and the live writes it has yet to replay.
-- KEYS[1]  period base
-- ARGV[1]  member, ARGV[2..] categories
-- Returns 1.
--@include lib/member-state.lua
--@include lib/apply-aggregate.lua

local base, member = KEYS[1], ARGV[1]
-- Above any aggregate's version, so apply() always takes the unranking write.
local LAST = 9007199254740991
for i = 2, #ARGV do
  local cat = ARGV[i]
  local families = {base}
  local token = redis.call('HGET', base .. ':rb', cat)
  if token then families[#families + 1] = base .. ':t:' .. token end
  for _, fam in ipairs(families) do
    local index = fam .. ':st:' .. cat
    if stateGet(index, member) then
      apply(fam, cat, member, LAST, '', '', '')
      stateDelete(index, member)
    end
  end
  -- Nor may a rebuild's replay of live writes bring them back.
  if token then redis.call('HDEL', base .. ':t:' .. token .. ':pd:' .. cat, member) end
end
return 1
