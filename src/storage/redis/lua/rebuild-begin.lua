-- Rebuild, step 1: registers the rebuild, so live projections also write into its temp keys.
-- KEYS[1]  period base
-- ARGV[1]  category, ARGV[2] token, ARGV[3] ttl in seconds of the rebuild's alive key
--          (refreshed by every fill)
-- Returns 1.

redis.call('HSET', KEYS[1] .. ':rb', ARGV[1], ARGV[2])
redis.call('SET', KEYS[1] .. ':t:' .. ARGV[2] .. ':alive', '1', 'EX', tonumber(ARGV[3]))
return 1
