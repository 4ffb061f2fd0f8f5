import { z } from 'zod';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const redisUrl = z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL');

const envSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  REDIS_URL: redisUrl,
  LEADERBOARD_REDIS_URL: redisUrl.optional(),
  /** Namespace of every Redis key Laurel writes (queues and leaderboards). */
  REDIS_PREFIX: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'letters, digits, _ or -, at most 32').default('laurel'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  ADMIN_API_KEY: z.string().min(16, 'must be at least 16 characters'),
  PUBLIC_READS: booleanFlag.default(false),
  /** Web processes (node:cluster) behind one port; 1 runs the web side in this process. */
  WEB_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(4),
  /** A worker running without the web side serves its own /metrics on this port. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** How long an API key lookup is cached in memory; a revoked key stops working within this time. */
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  WEBHOOK_URL: z.string().url().optional(),
  WEBHOOK_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
});

export type Env = z.infer<typeof envSchema>;

export class EnvError extends Error {}

/**
 * Parses the environment once at start-up. The first problem found is reported in one
 * line naming the variable, so an operator sees at once what to fix.
 */
export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const cleaned = Object.fromEntries(
    Object.entries(source).filter(([, v]) => v !== undefined && v !== ''),
  );
  const result = envSchema
    .refine((e) => !e.WEBHOOK_URL || e.WEBHOOK_SECRET, { path: ['WEBHOOK_SECRET'], message: 'is required when WEBHOOK_URL is set' })
    .safeParse(cleaned);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    const problem = issue.code === 'invalid_type' && cleaned[name] === undefined ? 'is required' : issue.message;
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
