-- Rebuild, step 1: registers the rebuild, so live projections also reach it (they wait in its
-- pending hash until the fill is done).
-- KEYS[1]  period base
-- ARGV[1]  category, ARGV[2] token, ARGV[3] ttl in seconds of the rebuild's alive key
--          (refreshed by every fill)
-- Returns 1.

local base, cat, token = KEYS[1], ARGV[1], ARGV[2]
redis.call('HSET', base .. ':rb', cat, token)
-- The alive key holds the start (server clock): the swap refuses a rebuild whose temp
-- buckets may have started to expire.
redis.call('SET', base .. ':t:' .. token .. ':alive', redis.call('TIME')[1], 'EX', tonumber(ARGV[3]))
return 1
