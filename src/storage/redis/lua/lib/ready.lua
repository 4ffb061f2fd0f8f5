-- Shared prologue of the reads (slice, place, around, pick, watch, targets; included, not a script of its own).
-- KEYS[3] is the period's ok hash (<base>:ok), ARGV[1] the category. Returns {0, rebuilding}
-- when the category is not known to be complete (Redis lost it, or a rebuild has not
-- finished): the caller then reads Postgres instead, and asks for a rebuild unless one runs.

if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 0 then
  local base = string.sub(KEYS[3], 1, -4)
  local token = redis.call('HGET', base .. ':rb', ARGV[1])
  local running = token and redis.call('EXISTS', base .. ':t:' .. token .. ':alive') == 1
  return {0, running and 1 or 0}
end
