import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Logger } from '../logger.js';
import type { AppContext } from '../context.js';
import { HttpError } from './errors.js';

export interface RateLimitSettings {
  windowSeconds: number;
  /** Requests per window for one API key; 0 = unlimited. */
  perKey: number;
  /** Requests per window for one member reading with player tokens; 0 = unlimited. */
  perPlayer: number;
  /** Requests per window for one client IP without a valid key; 0 = unlimited. */
  perIp: number;
  /** Lookups of keys not yet cached, per client IP and window; 0 = unlimited. */
  lookupsPerIp: number;
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
 * The budget an address spends: an IPv4 address, or the /64 an IPv6 address is in (one
 * subscriber usually holds a whole /64, so per-address budgets would be unlimited).
 */
export function ipBudgetId(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return ip || 'unknown';
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${prefix.map((part) => part.toString(16)).join(':')}::/64`;
}

/** The budgets one request can spend; each throws a 429 once spent. */
export interface Budgets {
  /** A request made with a valid key, costing `weight` requests (1 unless it is a costly read). */
  key(principalId: string, weight?: number): Promise<void>;
  /** A request made with a valid player token: the member's budget, whoever signed the token. */
  player(principalId: string, weight?: number): Promise<void>;
  /** A request without a valid key (anonymous, malformed or unknown key). */
  ip(ip: string | undefined, weight?: number): Promise<void>;
  /** A lookup in Postgres of a key this process has not seen: spent before the lookup. */
  lookup(ip: string | undefined): Promise<void>;
}

/**
 * Fixed-window request budgets, shared by every web process through Redis: one per API
 * key, one per member reading with player tokens, one per client IP for requests without a valid key, and one per client IP for key
 * lookups. Each costs exactly one Redis round trip (an atomic INCR-and-expire script).
 *
 * While that Redis is unreachable the limits fail open to per-process budgets rather than
 * refusing traffic: a rate limit protects capacity, and turning a cache outage into
 * rejected score events would be the worse failure for a game studio.
 */
export function createBudgets(redis: RedisClient, settings: RateLimitSettings, log: Logger): Budgets {
  const byKey = limiter(redis, settings, 'key', settings.perKey);
  const byPlayer = limiter(redis, settings, 'player', settings.perPlayer);
  const byIp = limiter(redis, settings, 'ip', settings.perIp);
  const byLookup = limiter(redis, settings, 'lookup', settings.lookupsPerIp);
  let degraded = false;
  redis.on('ready', () => {
    degraded = false;
  });

  const consume = async (target: Limiter | null, id: string, weight = 1) => {
    if (!target) return;
    if (redis.status !== 'ready' && !degraded) {
      degraded = true;
      log.warn({ redis: redis.status }, 'rate-limit Redis unreachable: limits now hold per process (failing open)');
    }
    try {
      // Never more than the whole budget, which would refuse the request whatever was spent.
      await target.consume(id, Math.min(weight, target.points));
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
        {
          'Retry-After': String(retryAfter),
        },
      );
    }
  };

  return {
    key: (principalId, weight) => consume(byKey, principalId, weight),
    player: (principalId, weight) => consume(byPlayer, principalId, weight),
    ip: (ip, weight) => consume(byIp, ipBudgetId(ip), weight),
    lookup: (ip) => consume(byLookup, ipBudgetId(ip)),
  };
}
