import type { RequestHandler } from 'express';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger.js';
import type { AppContext } from '../context.js';
import { principalOf } from './auth.js';
import { HttpError } from './errors.js';

export interface RateLimitSettings {
  windowSeconds: number;
  /** Requests per window for one API key; 0 = unlimited. */
  perKey: number;
  /** Requests per window for one client IP without a valid key; 0 = unlimited. */
  perIp: number;
  /** Namespace of the counters in Redis. */
  keyPrefix: string;
}

type Limiter = RateLimiterRedis;
/** The Redis the budgets are counted in (the context's leaderboard Redis). */
type RedisClient = AppContext['leaderboard']['redis'];

function limiter(redis: RedisClient, settings: RateLimitSettings, kind: string, points: number): Limiter | null {
  if (points <= 0) return null;
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: `${settings.keyPrefix}:rl:${kind}`,
    points,
    duration: settings.windowSeconds,
    // A Redis that is down or not yet connected must not stall requests: the limit falls
    // back at once to a budget of the same size kept in this process.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ points, duration: settings.windowSeconds }),
  });
}

/**
 * Fixed-window request budgets, shared by every web process through Redis: one per API
 * key, and one per client IP for requests without a key. Each request costs exactly one
 * Redis round trip (an atomic INCR-and-expire script).
 *
 * While that Redis is unreachable the limits fail open to per-process budgets rather than
 * refusing traffic: a rate limit protects capacity, and turning a cache outage into
 * rejected score events would be the worse failure for a game studio.
 */
export function rateLimit(redis: RedisClient, settings: RateLimitSettings, log: Logger): RequestHandler {
  const byKey = limiter(redis, settings, 'key', settings.perKey);
  const byIp = limiter(redis, settings, 'ip', settings.perIp);
  let degraded = false;
  redis.on('ready', () => {
    degraded = false;
  });

  const consume = async (target: Limiter, id: string) => {
    if (redis.status !== 'ready' && !degraded) {
      degraded = true;
      log.warn({ redis: redis.status }, 'rate-limit Redis unreachable: limits now hold per process (failing open)');
    }
    try {
      await target.consume(id);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) {
        // The in-process fallback itself failed: never refuse traffic for that.
        log.warn({ err: (rejection as Error).message }, 'rate limiter failed; request let through');
        return;
      }
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw new HttpError(
        429,
        'rate_limited',
        `too many requests: the budget is ${target.points} per ${settings.windowSeconds} s; retry in ${retryAfter} s`,
        undefined,
        { 'Retry-After': String(retryAfter) },
      );
    }
  };

  return async (req, res, next) => {
    const principal = principalOf(res);
    if (principal) {
      if (byKey) await consume(byKey, principal.id);
    } else if (byIp) {
      await consume(byIp, req.ip ?? 'unknown');
    }
    next();
  };
}
