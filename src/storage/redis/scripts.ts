import type { Redis } from 'ioredis';

/**
 * Lua scripts of the leaderboard Redis. Each runs atomically, so a reader never sees a
 * member removed from its old entry and not yet added under the new one.
 */

// KEYS[1]: the period key base. ARGV: groups of (category, member, version, score, entry, region);
// entry '' means "not ranked" (excluded), region '' means "no region scope".
const PROJECT = `
local base = KEYS[1]
for i = 1, #ARGV, 6 do
  local cat, member, version = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local score, entry, region = ARGV[i + 3], ARGV[i + 4], ARGV[i + 5]
  local stateKey = base .. ':s:' .. cat
  local current = redis.call('HGET', stateKey, member)
  local curVersion, curRegion, curEntry = 0, '', ''
  if current then
    local v, r, e = string.match(current, '^(%d+)|([^|]*)|(.*)$')
    curVersion, curRegion, curEntry = tonumber(v), r, e
  end
  if version > curVersion then
    local world = base .. ':z:' .. cat .. ':world'
    if curEntry ~= '' then
      redis.call('ZREM', world, curEntry)
      if curRegion ~= '' then redis.call('ZREM', base .. ':z:' .. cat .. ':' .. curRegion, curEntry) end
    end
    if entry ~= '' then
      redis.call('ZADD', world, score, entry)
      if region ~= '' then redis.call('ZADD', base .. ':z:' .. cat .. ':' .. region, score, entry) end
    end
    redis.call('HSET', stateKey, member, version .. '|' .. region .. '|' .. entry)
  end
end
return 1
`;

// KEYS[1]: scope sorted set. ARGV: offset, limit, shared ('1'|'0').
// Returns {total, rank offset of the first entry, {entry, score, ...}}.
const SLICE = `
local total = redis.call('ZCARD', KEYS[1])
local offset, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local items = redis.call('ZRANGE', KEYS[1], offset, offset + limit - 1, 'WITHSCORES')
local first = offset
if ARGV[3] == '1' and #items > 0 then
  first = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. items[2])
end
return {total, first, items}
`;

// KEYS[1]: scope sorted set, KEYS[2]: state hash. ARGV: member, shared ('1'|'0').
// Returns {total} for an unranked member, else {total, rank0, score}.
const PLACE = `
local total = redis.call('ZCARD', KEYS[1])
local state = redis.call('HGET', KEYS[2], ARGV[1])
if not state then return {total} end
local entry = string.match(state, '^%d+|[^|]*|(.*)$')
if not entry or entry == '' then return {total} end
local score = redis.call('ZSCORE', KEYS[1], entry)
if not score then return {total} end
local rank
if ARGV[2] == '1' then
  rank = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. score)
else
  rank = redis.call('ZRANK', KEYS[1], entry)
end
return {total, rank, score}
`;

// KEYS[1]: scope sorted set, KEYS[2]: state hash. ARGV: member, radius, shared ('1'|'0').
// Returns {total} for an unranked member, else {total, offset of the first entry, rank offset
// of the first entry, {entry, score, ...}}: the member's neighbours, clipped at both ends.
const AROUND = `
local total = redis.call('ZCARD', KEYS[1])
local state = redis.call('HGET', KEYS[2], ARGV[1])
if not state then return {total} end
local entry = string.match(state, '^%d+|[^|]*|(.*)$')
if not entry or entry == '' then return {total} end
local index = redis.call('ZRANK', KEYS[1], entry)
if not index then return {total} end
local radius = tonumber(ARGV[2])
local from = math.max(0, index - radius)
local items = redis.call('ZRANGE', KEYS[1], from, index + radius, 'WITHSCORES')
local first = from
if ARGV[3] == '1' and #items > 0 then
  first = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. items[2])
end
return {total, from, first, items}
`;

// KEYS[1]: scope sorted set, KEYS[2]: state hash. ARGV: member ids.
// Returns {member, entry, score, ...} for those ranked in the scope.
const PICK = `
local states = redis.call('HMGET', KEYS[2], unpack(ARGV))
local members, entries = {}, {}
for i, state in ipairs(states) do
  if state then
    local entry = string.match(state, '^%d+|[^|]*|(.*)$')
    if entry and entry ~= '' then
      members[#members + 1] = ARGV[i]
      entries[#entries + 1] = entry
    end
  end
end
local out = {}
if #entries == 0 then return out end
local scores = redis.call('ZMSCORE', KEYS[1], unpack(entries))
for i, score in ipairs(scores) do
  if score then
    out[#out + 1] = members[i]
    out[#out + 1] = entries[i]
    out[#out + 1] = score
  end
end
return out
`;

export interface LeaderboardCommands {
  laurelProject(base: string, ...args: string[]): Promise<number>;
  laurelSlice(scope: string, offset: number, limit: number, shared: string): Promise<[number, number, string[]]>;
  laurelPlace(scope: string, state: string, member: string, shared: string): Promise<[number, number?, string?]>;
  laurelAround(scope: string, state: string, member: string, radius: number, shared: string): Promise<[number, number?, number?, string[]?]>;
  laurelPick(scope: string, state: string, ...members: string[]): Promise<string[]>;
}

export type LeaderboardRedis = Redis & LeaderboardCommands;

/** Registers the scripts on a connection (ioredis sends EVALSHA and falls back to EVAL). */
export function withLeaderboardScripts(redis: Redis): LeaderboardRedis {
  redis.defineCommand('laurelProject', { numberOfKeys: 1, lua: PROJECT });
  redis.defineCommand('laurelSlice', { numberOfKeys: 1, lua: SLICE });
  redis.defineCommand('laurelPlace', { numberOfKeys: 2, lua: PLACE });
  redis.defineCommand('laurelAround', { numberOfKeys: 2, lua: AROUND });
  redis.defineCommand('laurelPick', { numberOfKeys: 2, lua: PICK });
  return redis as LeaderboardRedis;
}
