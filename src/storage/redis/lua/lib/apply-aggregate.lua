-- Shared by project.lua, rebuild-replay.lua, rebuild-swap.lua and erase.lua (included after
-- member-state.lua, not a script of its own).
-- apply(fam, cat, member, version, score, entry, region) writes one aggregate into a family
-- of keys (live: the period base; rebuild: its temp base fam = base .. ':t:' .. token),
-- keeping the highest version. The member state (fam:st:<cat>, see member-state.lua)
-- remembers, per member, its version, region and entry; fam:z:<cat>:world and
-- fam:z:<cat>:<region> are the ranked sets, fam:rg:<cat> the set of regions seen.
-- rebuilding(base, cat): a rebuild of the category runs (its temp keys are alive).

local function rebuilding(base, cat)
  local token = redis.call('HGET', base .. ':rb', cat)
  return token and redis.call('EXISTS', base .. ':t:' .. token .. ':alive') == 1
end

local function apply(fam, cat, member, version, score, entry, region)
  local index = fam .. ':st:' .. cat
  local key = bucketOf(index, member)
  local current = key and redis.call('HGET', key, member)
  local curVersion, curRegion, curEntry = 0, '', ''
  if current then curVersion, curRegion, curEntry = parseState(member, current) end
  if version <= curVersion then return end
  local world = fam .. ':z:' .. cat .. ':world'
  if curEntry ~= '' then
    redis.call('ZREM', world, curEntry)
    if curRegion ~= '' then redis.call('ZREM', fam .. ':z:' .. cat .. ':' .. curRegion, curEntry) end
  end
  if entry ~= '' then
    redis.call('ZADD', world, score, entry)
    if region ~= '' then
      redis.call('ZADD', fam .. ':z:' .. cat .. ':' .. region, score, entry)
      redis.call('SADD', fam .. ':rg:' .. cat, region)
    end
  end
  stateSet(index, member, stateValue(version, region, member, entry), key)
end
