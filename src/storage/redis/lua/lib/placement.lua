-- Shared by place.lua, watch.lua and targets.lua (included after member-state.lua,
-- entry-of.lua and shared-rank.lua).
-- placementOf(member, flag): the member's rank offset (rank - 1: its index, or under flag
-- '1' or '2' the shared rank sharedRank0 counts), sorted-set score and entry in KEYS[1];
-- -1, '' and '' when the member is not ranked.

local function placementOf(member, flag)
  local entry, score = entryOf(member)
  if not entry then return -1, '', '' end
  if flag ~= '0' then return sharedRank0(KEYS[1], flag, score, entry), score, entry end
  return redis.call('ZRANK', KEYS[1], entry), score, entry
end
