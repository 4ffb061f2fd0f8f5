-- Shared by place.lua and around.lua (included). entryOf(member): the member's sorted-set
-- entry in this scope (KEYS[1], found through the state hash KEYS[2]), or nil.

local function entryOf(member)
  local state = redis.call('HGET', KEYS[2], member)
  if not state then return nil end
  local entry = string.match(state, '^%d+|[^|]*|(.*)$')
  if not entry or entry == '' then return nil end
  if not redis.call('ZSCORE', KEYS[1], entry) then return nil end
  return entry
end
