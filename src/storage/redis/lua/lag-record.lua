-- Adds lags to one (board, period, hour) histogram of event-to-visible lags (rollups).
-- KEYS[1]  the histogram hash (bucket in ms -> count)
-- ARGV[1]  seconds it is kept after its last write, ARGV[2..] bucket, count, bucket, count...
-- Returns 1.
local key = KEYS[1]
for i = 2, #ARGV, 2 do
  redis.call('HINCRBY', key, ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', key, ARGV[1])
return 1
