import type { RedisClient } from './connections.js';
import { defineWatchScript, type WatchCommand } from './watch-script.js';

/**
 * Lua scripts of the leaderboard Redis. Each runs atomically, so a reader never sees a
 * member removed from its old entry and not yet added under the new one, nor a rebuilt
 * scope half swapped in. Key names are derived from the period base passed in KEYS[1];
 * all of them carry its hash tag, so every script touches one cluster slot.
 */

// Applies one aggregate to a family of keys (live: the period base; rebuild: its temp base),
// keeping the highest version. The state hash remembers, per member, "version|region|entry".
const APPLY = `
-- True while a rebuild of the category runs (its temp keys are alive): no need to ask for another.
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
`;

// KEYS[1]: period base. ARGV[1]: categories to mark complete first ("," separated; for a
// period this batch created), then groups of (category, member, version, score, entry, region);
// entry '' = not ranked, region '' = no region scope. While a category is being rebuilt the
// aggregate also goes into the rebuild's temp keys, so the swap loses nothing.
// Returns the categories that are not known to be complete and not being rebuilt.
const PROJECT = `${APPLY}
local base = KEYS[1]
if ARGV[1] ~= '' then
  for cat in string.gmatch(ARGV[1], '[^,]+') do redis.call('HSET', base .. ':ok', cat, '1') end
end
local missing, seen = {}, {}
for i = 2, #ARGV, 6 do
  local cat, member, version = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local score, entry, region = ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  apply(base, cat, member, version, score, entry, region)
  local token = redis.call('HGET', base .. ':rb', cat)
  if token then
    local fam = base .. ':t:' .. token
    local ttl = redis.call('PTTL', fam .. ':alive')
    -- Only a live rebuild gets the write, and its temp keys expire with it.
    if ttl > 0 then
      apply(fam, cat, member, version, score, entry, region)
      for _, key in ipairs({fam .. ':s:' .. cat, fam .. ':z:' .. cat .. ':world', fam .. ':rg:' .. cat}) do
        redis.call('PEXPIRE', key, ttl)
      end
      if region ~= '' then redis.call('PEXPIRE', fam .. ':z:' .. cat .. ':' .. region, ttl) end
    end
  end
  if not seen[cat] and redis.call('HEXISTS', base .. ':ok', cat) == 0 and not rebuilding(base, cat) then
    missing[#missing + 1] = cat
  end
  seen[cat] = true
end
return missing
`;

// Rebuild, step 1. KEYS[1]: period base. ARGV: category, token. Registers the rebuild so
// live projections also write into its temp keys from now on.
// ARGV[3]: ttl seconds of the rebuild's "alive" key, refreshed by every fill.
const REBUILD_BEGIN = `
redis.call('HSET', KEYS[1] .. ':rb', ARGV[1], ARGV[2])
redis.call('SET', KEYS[1] .. ':t:' .. ARGV[2] .. ':alive', '1', 'EX', tonumber(ARGV[3]))
return 1
`;

// Rebuild, step 2. KEYS[1]: period base. ARGV: category, token, ttl seconds, then groups of
// (member, version, score, entry, region). Returns 0 when a newer rebuild took over.
// Members a live projection has not touched yet (nearly all of them) are written with a
// few bulk commands per chunk (HMGET, ZADD, HSET) instead of several calls each; the rest
// go through apply(), whose versions decide. A page holds each member once.
const REBUILD_FILL = `${APPLY}
local base, cat, token = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', base .. ':rb', cat) ~= token then return 0 end
local fam = base .. ':t:' .. token
local stateKey = fam .. ':s:' .. cat
local zprefix = fam .. ':z:' .. cat .. ':'
local count = (#ARGV - 3) / 5
-- unpack() is bounded by Lua's C stack (8000 slots): chunks keep each bulk command under it.
local CHUNK = 1000
for from = 0, count - 1, CHUNK do
  local to = math.min(count, from + CHUNK) - 1
  local members = {}
  for j = from, to do members[#members + 1] = ARGV[4 + j * 5] end
  local states = redis.call('HMGET', stateKey, unpack(members))
  local world, byRegion, regions, hset = {}, {}, {}, {}
  for j = from, to do
    local i = 4 + j * 5
    local member, version, score, entry, region = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    if states[j - from + 1] or version < 1 then
      apply(fam, cat, member, version, score, entry, region)
    else
      if entry ~= '' then
        world[#world + 1] = score
        world[#world + 1] = entry
        if region ~= '' then
          local r = byRegion[region]
          if not r then
            r = {}
            byRegion[region] = r
            regions[#regions + 1] = region
          end
          r[#r + 1] = score
          r[#r + 1] = entry
        end
      end
      hset[#hset + 1] = member
      hset[#hset + 1] = ARGV[i + 1] .. '|' .. region .. '|' .. entry
    end
  end
  if #world > 0 then redis.call('ZADD', zprefix .. 'world', unpack(world)) end
  for _, region in ipairs(regions) do redis.call('ZADD', zprefix .. region, unpack(byRegion[region])) end
  if #regions > 0 then redis.call('SADD', fam .. ':rg:' .. cat, unpack(regions)) end
  if #hset > 0 then redis.call('HSET', stateKey, unpack(hset)) end
end
-- A crashed rebuild must not leave its temp keys forever.
local ttl = tonumber(ARGV[3])
for _, key in ipairs({fam .. ':alive', stateKey, zprefix .. 'world', fam .. ':rg:' .. cat}) do
  redis.call('EXPIRE', key, ttl)
end
for _, region in ipairs(redis.call('SMEMBERS', fam .. ':rg:' .. cat)) do
  redis.call('EXPIRE', zprefix .. region, ttl)
end
return 1
`;

// Rebuild, step 3. KEYS[1]: period base. ARGV: category, token. Replaces the live keys of
// the category with the temp ones in one step and marks the category complete.
// Returns 0 when a newer rebuild took over, -1 when the temp keys expired (a stalled rebuild).
const REBUILD_SWAP = `
local base, cat, token = KEYS[1], ARGV[1], ARGV[2]
if redis.call('HGET', base .. ':rb', cat) ~= token then return 0 end
local fam = base .. ':t:' .. token
if redis.call('EXISTS', fam .. ':alive') == 0 then return -1 end
redis.call('DEL', fam .. ':alive')
for _, region in ipairs(redis.call('SMEMBERS', base .. ':rg:' .. cat)) do
  redis.call('DEL', base .. ':z:' .. cat .. ':' .. region)
end
redis.call('DEL', base .. ':z:' .. cat .. ':world', base .. ':s:' .. cat, base .. ':rg:' .. cat)
for _, region in ipairs(redis.call('SMEMBERS', fam .. ':rg:' .. cat)) do
  local key = fam .. ':z:' .. cat .. ':' .. region
  if redis.call('EXISTS', key) == 1 then
    redis.call('RENAME', key, base .. ':z:' .. cat .. ':' .. region)
    redis.call('PERSIST', base .. ':z:' .. cat .. ':' .. region)
  end
end
for _, suffix in ipairs({':z:' .. cat .. ':world', ':s:' .. cat, ':rg:' .. cat}) do
  if redis.call('EXISTS', fam .. suffix) == 1 then
    redis.call('RENAME', fam .. suffix, base .. suffix)
    redis.call('PERSIST', base .. suffix)
  end
end
redis.call('HSET', base .. ':ok', cat, '1')
redis.call('HDEL', base .. ':rb', cat)
return 1
`;

// Reads. KEYS[1]: scope sorted set, KEYS[2]: state hash, KEYS[3]: the period's ok hash.
// Each answers {0, rebuilding} when the category is not known to be complete (Redis lost
// it, or a rebuild has not finished): the caller then reads Postgres instead, and asks for
// a rebuild unless one is running.
export const READY = `
if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 0 then
  local base = string.sub(KEYS[3], 1, -4)
  local token = redis.call('HGET', base .. ':rb', ARGV[1])
  local running = token and redis.call('EXISTS', base .. ':t:' .. token .. ':alive') == 1
  return {0, running and 1 or 0}
end
`;

// ARGV: category, offset, limit, shared. Returns {1, total, rank offset of the first entry, {entry, score, ...}}.
const SLICE = `${READY}
local total = redis.call('ZCARD', KEYS[1])
local offset, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
local items = redis.call('ZRANGE', KEYS[1], offset, offset + limit - 1, 'WITHSCORES')
local first = offset
if ARGV[4] == '1' and #items > 0 then
  first = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. items[2])
end
return {1, total, first, items}
`;


// Finds the member's sorted-set entry in this scope, or nil.
export const ENTRY = `
local function entryOf(member)
  local state = redis.call('HGET', KEYS[2], member)
  if not state then return nil end
  local entry = string.match(state, '^%d+|[^|]*|(.*)$')
  if not entry or entry == '' then return nil end
  if not redis.call('ZSCORE', KEYS[1], entry) then return nil end
  return entry
end
`;

// ARGV: category, member, shared. Returns {1, total} for an unranked member, else {1, total, rank0, score}.
const PLACE = `${READY}${ENTRY}
local total = redis.call('ZCARD', KEYS[1])
local entry = entryOf(ARGV[2])
if not entry then return {1, total} end
local score = redis.call('ZSCORE', KEYS[1], entry)
local rank
if ARGV[3] == '1' then
  rank = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score)
else
  rank = redis.call('ZRANK', KEYS[1], entry)
end
return {1, total, rank, score}
`;

// ARGV: category, member, radius, shared. Returns {1, total} for an unranked member, else
// {1, total, index of the first entry, rank offset of the first entry, {entry, score, ...}}.
const AROUND = `${READY}${ENTRY}
local total = redis.call('ZCARD', KEYS[1])
local entry = entryOf(ARGV[2])
if not entry then return {1, total} end
local index = redis.call('ZRANK', KEYS[1], entry)
local radius = tonumber(ARGV[3])
local from = math.max(0, index - radius)
local items = redis.call('ZRANGE', KEYS[1], from, index + radius, 'WITHSCORES')
local first = from
if ARGV[4] == '1' and #items > 0 then
  first = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. items[2])
end
return {1, total, from, first, items}
`;

// ARGV: category, member ids. Returns {1, {member, entry, score, ...}} for those ranked.
const PICK = `${READY}
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
`;

/** Not complete in Redis; the second element is 1 while a rebuild of it runs. */
type NotReady = [0, number];

export interface LeaderboardCommands {
  laurelProject(base: string, markComplete: string, ...args: string[]): Promise<string[]>;
  laurelRebuildBegin(base: string, category: string, token: string, ttl: number): Promise<number>;
  laurelRebuildFill(base: string, category: string, token: string, ttl: number, ...args: string[]): Promise<number>;
  laurelRebuildSwap(base: string, category: string, token: string): Promise<number>;
  laurelSlice(scope: string, state: string, ok: string, category: string, offset: number, limit: number, shared: string): Promise<NotReady | [1, number, number, string[]]>;
  laurelPlace(scope: string, state: string, ok: string, category: string, member: string, shared: string): Promise<NotReady | [1, number, number?, string?]>;
  laurelAround(scope: string, state: string, ok: string, category: string, member: string, radius: number, shared: string): Promise<NotReady | [1, number, number?, number?, string[]?]>;
  laurelPick(scope: string, state: string, ok: string, category: string, ...members: string[]): Promise<NotReady | [1, string[]]>;
}

export type LeaderboardRedis = RedisClient & LeaderboardCommands & WatchCommand;

/**
 * Registers the scripts on a connection (ioredis sends EVALSHA and falls back to EVAL; on a
 * cluster, to the node serving the first key's slot).
 */
export function withLeaderboardScripts(redis: RedisClient): LeaderboardRedis {
  redis.defineCommand('laurelProject', { numberOfKeys: 1, lua: PROJECT });
  redis.defineCommand('laurelRebuildBegin', { numberOfKeys: 1, lua: REBUILD_BEGIN });
  redis.defineCommand('laurelRebuildFill', { numberOfKeys: 1, lua: REBUILD_FILL });
  redis.defineCommand('laurelRebuildSwap', { numberOfKeys: 1, lua: REBUILD_SWAP });
  redis.defineCommand('laurelSlice', { numberOfKeys: 3, lua: SLICE });
  redis.defineCommand('laurelPlace', { numberOfKeys: 3, lua: PLACE });
  redis.defineCommand('laurelAround', { numberOfKeys: 3, lua: AROUND });
  redis.defineCommand('laurelPick', { numberOfKeys: 3, lua: PICK });
  defineWatchScript(redis);
  return redis as LeaderboardRedis;
}
