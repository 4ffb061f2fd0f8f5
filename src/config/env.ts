import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { estimatedKeyBits, MIN_KEY_BITS } from './key-strength.js';
import { looksLikePlayerToken } from '../domain/player-token-shape.js';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const redisUrl = z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL');

/**
 * A Redis URL, or with the matching *_CLUSTER flag a comma-separated list of cluster seed
 * nodes (any reachable master or replica; the rest are discovered). Checked in the refine below,
 * where the flag is known.
 */
const redisUrls = z.string();

/** Problems of a Redis URL setting, given whether it names a cluster; null when valid. */
export function redisUrlProblem(value: string, cluster: boolean): string | null {
  const urls = value.split(',').map((u) => u.trim());
  if (urls.length > 1 && !cluster) return 'holds several URLs; set the matching *_CLUSTER=true for a Redis Cluster';
  for (const url of urls) {
    if (!redisUrl.safeParse(url).success) return 'must be a redis:// or rediss:// URL';
    // A cluster has database 0 only.
    if (cluster && !/^rediss?:\/\/[^/]*(\/0?)?$/.test(url))
      return 'must not name a database (a Redis Cluster has database 0 only)';
  }
  return null;
}

/**
 * Whether Express accepts a TRUST_PROXY list of addresses: it splits the string at commas
 * and compiles it with proxy-addr, which throws on anything else; checked here so a typo
 * stops the process with the one-line environment error instead of a stack trace.
 */
function trustsAddresses(list: string): boolean {
  try {
    proxyAddr.compile(list.split(',').map((a) => a.trim()));
    return true;
  } catch {
    return false;
  }
}

/**
 * A key or secret a person or a script chose: long, without whitespace (a generated one has
 * none, and the deploy/ placeholders do, so an unchanged manifest fails at start) and as hard
 * to guess as a random 128-bit key. ADMIN_API_KEY, PLAYER_TOKEN_SECRET, ERASURE_HASH_SECRET.
 */
const hardToGuess = z
  .string()
  .min(32, 'must be at least 32 characters (generate one: openssl rand -hex 32)')
  .max(512, 'must be at most 512 characters')
  .regex(/^\S+$/, 'must not contain whitespace')
  .superRefine((key, ctx) => {
    const bits = estimatedKeyBits(key);
    if (bits < MIN_KEY_BITS)
      ctx.addIssue({
        code: 'custom',
        message: `is too easy to guess (about ${bits} bits estimated from its characters and repeats, at least ${MIN_KEY_BITS} needed; generate one: openssl rand -hex 32)`,
      });
  });

const envSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  REDIS_URL: redisUrls,
  /** REDIS_URL lists the seed nodes of a Redis Cluster. */
  REDIS_CLUSTER: booleanFlag.default(false),
  LEADERBOARD_REDIS_URL: redisUrls.optional(),
  /** LEADERBOARD_REDIS_URL lists the seed nodes of a Redis Cluster. */
  LEADERBOARD_REDIS_CLUSTER: booleanFlag.optional(),
  /** Namespace of every Redis key Laurel writes (queues and leaderboards). */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, _ or -, at most 32')
    .default('laurel'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  ADMIN_API_KEY: hardToGuess.refine(
    (key) => !looksLikePlayerToken(key),
    'must not look like a player token (three parts joined by dots)',
  ),
  PUBLIC_READS: booleanFlag.default(false),
  /** Web processes (node:cluster) behind one port; 1 runs the web side in this process. */
  WEB_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /**
   * How long a web process gathers concurrent intake requests into one queue job (group
   * commit), from the group's first request; a group is also added as soon as it holds 1000
   * events. 0 adds each request as it comes (a group of one).
   */
  INTAKE_GROUP_WINDOW_MS: z.coerce.number().int().min(0).max(1000).default(3),
  /**
   * Load shedding: intake requests a web process holds at once (validating, waiting for their
   * group's add or for ?wait=true results). Past it a request is answered 503 with Retry-After
   * at once. 0: no limit.
   */
  INTAKE_MAX_IN_FLIGHT: z.coerce.number().int().min(0).default(500),
  /**
   * Load shedding by queue lag: when the oldest score job still waiting was queued longer ago
   * than this (ms), intake answers 503 with Retry-After at once. 0: off (a backlog is let grow,
   * bounded by the queue Redis' maxmemory).
   */
  INTAKE_MAX_QUEUE_LAG_MS: z.coerce.number().int().min(0).default(0),
  /** A process whose clock is further than this from Postgres' logs a warning (Laurel corrects it either way). */
  CLOCK_SKEW_WARN_MS: z.coerce.number().int().min(0).default(1000),
  /** ... and further than this, it closes no period: its correction is not trusted that far. */
  CLOCK_SKEW_REFUSE_MS: z.coerce.number().int().min(0).default(60_000),
  /**
   * How long a worker's hold on a job lasts without renewal. A worker that dies (SIGKILL,
   * OOM, lost host) stops renewing; after this long another worker takes its jobs over.
   */
  // How often each process reads the leaderboard Redis' key layout record, and how long no
  // write of 0.2.0's layout must be seen before the handover rebuilds (key-layout-watch.ts).
  LAYOUT_CHECK_MS: z.coerce.number().int().min(100).max(600_000).default(5000),
  LAYOUT_QUIET_MS: z.coerce.number().int().min(500).max(3_600_000).default(30_000),
  JOB_LOCK_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /** A worker running without the web side serves its own /metrics on this port. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  /** A dependency's failures are logged once per this many seconds, with a count of the rest. */
  ERROR_LOG_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  /**
   * On SIGTERM /readyz answers 503 at once, and the process keeps serving this long before it
   * stops accepting connections, so load balancers take it out before connections are refused.
   */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(120_000).default(0),
  /** After the delay, in-flight requests and jobs get this long to finish before the process exits 1. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(15_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** How long an API key lookup is cached in memory; a revoked key stops working within this time. */
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  /** Fixed window of the rate limits below, in seconds. */
  RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  /** Requests one API key may make per window, across all web processes; 0 turns the limit off. */
  RATE_LIMIT_PER_KEY: z.coerce.number().int().min(0).default(5000),
  /** Requests without a valid key (public reads, failed logins) per client IP and window; 0 = off. */
  RATE_LIMIT_PER_IP: z.coerce.number().int().min(0).default(600),
  /** Postgres lookups of keys not yet cached, per client IP and window (before the lookup); 0 = off. */
  RATE_LIMIT_KEY_LOOKUPS_PER_IP: z.coerce.number().int().min(0).default(100),
  /** Requests one member may make per window with player tokens, across all web processes; 0 = off. */
  RATE_LIMIT_PER_PLAYER: z.coerce.number().int().min(0).default(120),
  /**
   * Signs and verifies player tokens (HS256): a game's backend may sign them itself with it.
   * Unset: no player token is minted or accepted.
   */
  PLAYER_TOKEN_SECRET: hardToGuess.optional(),
  /**
   * Express "trust proxy": the number of proxy hops in front, or their addresses; decides the
   * client IP. `true` (trust every X-Forwarded-For hop) is refused: any client could then
   * claim any IP and escape its per-IP budget.
   */
  TRUST_PROXY: z
    .string()
    .default('false')
    .refine(
      (v) => v.toLowerCase() !== 'true',
      'must not be true (any client could then pick its own IP): give the number of proxy hops in front (e.g. 1) or their addresses (e.g. loopback, 10.0.0.0/8)',
    )
    .refine(
      (v) => /^(false|\d+)$/i.test(v) || trustsAddresses(v),
      'must be false, a number of proxy hops (e.g. 1) or comma-separated addresses and subnets (e.g. loopback, 10.0.0.0/8)',
    )
    .transform((v): false | number | string => (v.toLowerCase() === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v)),
  /** Bull Board may retry, add or remove jobs; off, it only shows the queues. */
  BULL_BOARD_WRITE: booleanFlag.default(false),
  /** Time a client has to send its request headers; then 408 and the connection is closed. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(10_000),
  /** Time a client has to send its whole request, body included; then 408. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** How long an idle keep-alive connection stays open; behind a load balancer, longer than its idle timeout. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** Open connections one web process accepts (room for 10,000 open event streams, docs/design/realtime.md); beyond, new ones are closed at once. */
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(16_384),
  /**
   * Connections one client address (an IPv6 /64) may hold open before their first request's
   * headers are in; one more is closed at once, so half-sent headers cannot fill the process.
   * Behind a proxy every connection comes from the proxy's address: raise it or set 0 (no cap).
   */
  HTTP_PENDING_CONNECTIONS_PER_IP: z.coerce.number().int().min(0).max(1_000_000).default(64),
  /**
   * Event streams one web process serves at once; below HTTP_MAX_CONNECTIONS, so probes and
   * intake always find room. Unset: three quarters of HTTP_MAX_CONNECTIONS, at most 10,000.
   */
  STREAMS_MAX: z.coerce.number().int().min(1).max(1_000_000).optional(),
  /** Event streams one API key holds open in one web process; 0 = no cap. */
  STREAMS_PER_KEY: z.coerce.number().int().min(0).max(1_000_000).default(100),
  /** Event streams one client address (an IPv6 /64) holds open in one web process; 0 = no cap. */
  STREAMS_PER_IP: z.coerce.number().int().min(0).max(1_000_000).default(100),
  /** Event streams one member holds open with player tokens in one web process; 0 = no cap. */
  STREAMS_PER_PLAYER: z.coerce.number().int().min(0).max(1_000_000).default(4),
  /**
   * Postgres standings reads at once per process while the leaderboard Redis cannot answer;
   * one more is refused with 503 and Retry-After, so a burst during a Redis loss cannot
   * take the pool the rest of the service needs (the fallback has a pool of its own).
   */
  FALLBACK_MAX_CONCURRENT: z.coerce.number().int().min(1).max(256).default(4),
  /** Longest a Postgres standings read may run; a slower one is cancelled and answered 503. */
  FALLBACK_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(3000),
  /**
   * Origins whose browser pages may read answers (CORS): a comma-separated list of origins
   * (`https://game.example.com`), or `*` for any (only with PUBLIC_READS). Empty: none.
   */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((v): '*' | string[] =>
      v.trim() === '*'
        ? '*'
        : v
            .split(',')
            .map((o) => o.trim())
            .filter(Boolean),
    )
    .refine(
      (v) => v === '*' || v.every((o) => /^https?:\/\/[^/\s]+$/.test(o)),
      'must be * or a comma-separated list of origins like https://game.example.com',
    ),
  /**
   * Intake answers 503 (Retry-After) once the queue Redis uses this share of its maxmemory,
   * before Redis itself would refuse the queue's writes (it runs with noeviction).
   */
  QUEUE_MEMORY_REFUSE_RATIO: z.coerce.number().gt(0).max(1).default(0.9),
  /**
   * How long a closed period keeps its leaderboard keys in Redis. After that the period tick
   * removes them and reads of the period are answered from its final results in Postgres.
   */
  CLOSED_PERIOD_CACHE_HOURS: z.coerce.number().int().min(0).max(87_600).default(168),
  /** Interval of the `: keepalive` comment on every open stream (15 s by default, docs/design/realtime.md). */
  STREAM_KEEPALIVE_MS: z.coerce.number().int().min(50).max(600_000).default(15_000),
  WEBHOOK_URL: z.string().url().optional(),
  WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Keys the erasure record's member hash (services/erasure-service.ts); unset: derived from ADMIN_API_KEY. */
  ERASURE_HASH_SECRET: hardToGuess.optional(),
});

export type Env = z.infer<typeof envSchema>;

/**
 * The event streams one web process serves at once: STREAMS_MAX, or by default three
 * quarters of the connection limit (at most 10,000), so a quarter stays free for probes,
 * intake and reads. Derived here rather than at parse time, so a parsed environment handed
 * to another process still follows that process's own connection limit.
 */
export function streamsMax(env: Pick<Env, 'STREAMS_MAX' | 'HTTP_MAX_CONNECTIONS'>): number {
  return env.STREAMS_MAX ?? Math.min(10_000, Math.floor((env.HTTP_MAX_CONNECTIONS * 3) / 4));
}

/** Every variable the environment schema reads (documented in .env.example). */
export const ENV_VARIABLES: readonly string[] = Object.keys(envSchema.shape);

export class EnvError extends Error {}

/**
 * Parses the environment once at start-up. The first problem found is reported in one
 * line naming the variable, so an operator sees at once what to fix.
 */
export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const result = envSchema
    .superRefine((e, check) => {
      const queueProblem = redisUrlProblem(e.REDIS_URL, e.REDIS_CLUSTER);
      if (queueProblem) check.addIssue({ code: 'custom', path: ['REDIS_URL'], message: queueProblem });
      if (e.LEADERBOARD_REDIS_URL === undefined) {
        // Without a URL of its own the leaderboard shares REDIS_URL, cluster or not.
        if (e.LEADERBOARD_REDIS_CLUSTER !== undefined) {
          check.addIssue({
            code: 'custom',
            path: ['LEADERBOARD_REDIS_CLUSTER'],
            message: 'needs LEADERBOARD_REDIS_URL (without it the leaderboards share REDIS_URL and REDIS_CLUSTER)',
          });
        }
        return;
      }
      const problem = redisUrlProblem(e.LEADERBOARD_REDIS_URL, e.LEADERBOARD_REDIS_CLUSTER ?? false);
      if (problem) check.addIssue({ code: 'custom', path: ['LEADERBOARD_REDIS_URL'], message: problem });
    })
    .refine((e) => e.HTTP_HEADERS_TIMEOUT_MS <= e.HTTP_REQUEST_TIMEOUT_MS, {
      path: ['HTTP_HEADERS_TIMEOUT_MS'],
      message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS',
    })
    .refine((e) => e.STREAMS_MAX === undefined || e.STREAMS_MAX < e.HTTP_MAX_CONNECTIONS, {
      path: ['STREAMS_MAX'],
      message: 'must be below HTTP_MAX_CONNECTIONS (probes and intake need connections of their own)',
    })
    .refine((e) => e.CORS_ORIGINS !== '*' || e.PUBLIC_READS, {
      path: ['CORS_ORIGINS'],
      message: 'may be * only with PUBLIC_READS=true (list the origins of your pages otherwise)',
    })
    .refine((e) => !e.WEBHOOK_URL || e.WEBHOOK_SECRET, {
      path: ['WEBHOOK_SECRET'],
      message: 'is required when WEBHOOK_URL is set',
    })
    .safeParse(cleaned);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    const problem =
      issue.code === 'invalid_type' && cleaned[name] === undefined
        ? 'is required (set it in the environment or in .env; .env.example lists every variable)'
        : issue.message;
    throw new EnvError(`invalid environment: ${name} ${problem}`);
  }
  return result.data;
}

/** Loads the environment or exits with a one-line message. */
export function loadEnvOrExit(): Env {
  try {
    return parseEnv();
  } catch (err) {
    if (err instanceof EnvError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
