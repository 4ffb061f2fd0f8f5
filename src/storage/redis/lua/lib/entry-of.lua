-- Shared by place.lua, around.lua, watch.lua and targets.lua (included after member-state.lua).
-- entryOf(member): the member's sorted-set entry in this scope (KEYS[1], found through the
-- member state whose index is KEYS[2]) and its score, or nil. The score comes with it: the
-- check that the entry is in the set reads it anyway, and each call costs the script.

local function entryOf(member)
  local state = stateGet(KEYS[2], member)
  if not state then return nil end
  local _, _, entry = parseState(member, state)
  if entry == '' then return nil end
  local score = redis.call('ZSCORE', KEYS[1], entry)
  if not score then return nil end
  return entry, score
end
