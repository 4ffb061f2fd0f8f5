-- Shared by project.lua, rebuild-fill.lua and erase.lua (included, not a script of its own).
-- apply(fam, cat, member, version, score, entry, region) writes one aggregate into a family
-- of keys (live: the period base; rebuild: its temp base fam = base .. ':t:' .. token),
-- keeping the highest version. The state hash fam:s:<cat> remembers, per member,
-- "version|region|entry"; fam:z:<cat>:world and fam:z:<cat>:<region> are the ranked sets,
-- fam:rg:<cat> the set of regions seen. rebuilding(base, cat): a rebuild of the category
-- runs (its temp keys are alive).

local function rebuilding(base, cat)
  local token = redis.call('HGET', base .. ':rb', cat)
  return token and redis.call('EXISTS', base .. ':t:' .. token .. ':alive') == 1
end

local function apply(fam, cat, member, version, score, entry, region)
  local stateKey = fam .. ':s:' .. cat
  local current = redis.call('HGET', stateKey, member)
  local curVersion, curRegion, curEntry = 0, '', ''
  if current then
    local v, r, e = string.match(current, '^(%d+)|([^|]*)|(.*)$')
    curVersion, curRegion, curEntry = tonumber(v), r, e
  end
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
  redis.call('HSET', stateKey, member, version .. '|' .. region .. '|' .. entry)
end
