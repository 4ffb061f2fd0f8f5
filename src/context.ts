import type { FlowProducer, Queue } from 'bullmq';
import type { Env } from './config/env.js';
import { systemClock, type Clock } from './clock.js';
import { createLogger, type Logger } from './logger.js';
import { createPostgres, type Db, type PostgresHandle } from './storage/postgres/database.js';
import { BoardCatalog } from './storage/board-catalog.js';
import { PeriodCache } from './storage/period-row-cache.js';
import {
  createFailFastRedis,
  onConnectionError,
  leaderboardTarget,
  queueTarget,
  type RedisClient,
} from './storage/redis/connections.js';
import { KeyLayoutRecord } from './storage/redis/key-layout.js';
import { LeaderboardKeys } from './storage/redis/leaderboard-keys.js';
import { LeaderboardCache } from './storage/redis/leaderboard-cache.js';
import { withLeaderboardScripts } from './storage/redis/scripts.js';
import { createScoreEventsQueue, type ScoreEventsQueue } from './queue/score-events-queue.js';
import { createRebuildFlowProducer, createRebuildQueue, type RebuildQueue } from './queue/rebuild-queue.js';
import { createPeriodsQueue, type PeriodsQueue } from './queue/periods-queue.js';
import { createWebhooksQueue, type WebhooksQueue } from './queue/webhooks-queue.js';
import { Metrics } from './observability/metrics.js';
import type { LaurelError } from './domain/errors.js';
import { storageFailure } from './storage/failures.js';
import { RepeatLimitedLog } from './observability/repeat-limited-log.js';
import { FALLBACK_SESSION_SETTINGS, FallbackReads } from './storage/postgres/fallback-reads.js';
import { MemberDirectory } from './services/member-directory.js';
import { MemberChanges } from './storage/redis/member-changes.js';
import { QueueMemoryGuard } from './services/intake-backpressure.js';

/**
 * Points where tests inject failures into the real pipeline (a crash between the Postgres
 * commit and the Redis write, say). Production leaves them empty.
 */
export interface FaultHooks {
  afterCommit?: (jobId: string | undefined) => void | Promise<void>;
  /** An intake request joined the group forming (`request`: its place in it). */
  joinedGroup?: (request: number) => void;
  /** Before a group of intake requests is added to the queue: a throw fails the add. */
  beforeGroupAdd?: (requests: number) => void | Promise<void>;
  /** Between the open -> closing transition and the final standings of a period. */
  midClose?: (board: string, period: string) => void | Promise<void>;
}

/** Everything a request handler or a job processor needs, passed in rather than imported. */
export interface AppContext {
  env: Env;
  log: Logger;
  clock: Clock;
  postgres: PostgresHandle;
  db: Db;
  boards: BoardCatalog;
  periods: PeriodCache;
  /** Queue Redis for producers: fail-fast, so intake answers 503 when it is down. */
  queueRedis: RedisClient;
  leaderboard: LeaderboardCache;
  /** Standings reads from Postgres when Redis cannot answer: bounded, on a pool of their own. */
  fallback: FallbackReads;
  /** Display names and follow lists, cached and invalidated across processes. */
  members: MemberDirectory;
  /** The four queues, each typed by its contract: services add jobs through src/queue/enqueue.ts. */
  scoreQueue: ScoreEventsQueue;
  rebuildQueue: RebuildQueue;
  rebuildFlow: FlowProducer;
  periodsQueue: PeriodsQueue;
  webhooksQueue: WebhooksQueue;
  metrics: Metrics;
  /** Where dependency failures are logged: once per dependency per interval, with a count. */
  failures: RepeatLimitedLog;
  /** Intake's backpressure on the queue Redis' memory. */
  queueMemory: QueueMemoryGuard;
  faults: FaultHooks;
  /** What a storage failure means in Laurel's terms (an outage, unstorable text), or undefined for a bug. */
  failureOf: (err: unknown) => LaurelError | undefined;
  close(): Promise<void>;
}

export interface ContextOptions {
  clock?: Clock;
  log?: Logger;
  faults?: FaultHooks;
  name?: string;
}

export function createContext(env: Env, options: ContextOptions = {}): AppContext {
  const name = options.name ?? 'laurel';
  const log = options.log ?? createLogger(env.LOG_LEVEL);
  const postgres = createPostgres(env.DATABASE_URL, { applicationName: name, max: 10 });
  // Created connectionless: the pool opens a connection only when a fallback read needs one.
  const fallbackPostgres = createPostgres(env.DATABASE_URL, {
    applicationName: `${name}-fallback`,
    max: env.FALLBACK_MAX_CONCURRENT,
    statementTimeoutMs: env.FALLBACK_STATEMENT_TIMEOUT_MS,
    sessionSettings: FALLBACK_SESSION_SETTINGS,
  });
  const queueRedis = createFailFastRedis(queueTarget(env), `${name}-queue`);
  const leaderboardRedis = withLeaderboardScripts(
    createFailFastRedis(leaderboardTarget(env), `${name}-leaderboard`, { pipelined: true }),
  );
  const failures = new RepeatLimitedLog(log, env.ERROR_LOG_INTERVAL_SECONDS * 1000);
  onConnectionError(queueRedis, (err) => failures.warn('queue-redis', err, 'redis connection error'));
  onConnectionError(leaderboardRedis, (err) => failures.warn('leaderboard-redis', err, 'redis connection error'));
  const keys = new LeaderboardKeys(env.REDIS_PREFIX);
  const memberChanges = new MemberChanges(leaderboardRedis, env.REDIS_PREFIX);
  const scoreQueue = createScoreEventsQueue(queueRedis, env.REDIS_PREFIX);
  scoreQueue.on('error', (err) => failures.warn('queue-redis', err, 'score queue error'));
  const rebuildQueue = createRebuildQueue(queueRedis, env.REDIS_PREFIX);
  rebuildQueue.on('error', (err) => failures.warn('queue-redis', err, 'rebuild queue error'));
  const rebuildFlow = createRebuildFlowProducer(queueRedis, env.REDIS_PREFIX);
  rebuildFlow.on('error', (err) => failures.warn('queue-redis', err, 'rebuild flow error'));
  const periodsQueue = createPeriodsQueue(queueRedis, env.REDIS_PREFIX);
  periodsQueue.on('error', (err) => failures.warn('queue-redis', err, 'periods queue error'));
  const webhooksQueue = createWebhooksQueue(queueRedis, env.REDIS_PREFIX);
  webhooksQueue.on('error', (err) => failures.warn('queue-redis', err, 'webhooks queue error'));
  const metrics = new Metrics(() => [scoreQueue, rebuildQueue, periodsQueue, webhooksQueue] as Queue[]);
  const queueMemory = new QueueMemoryGuard(queueRedis, env.QUEUE_MEMORY_REFUSE_RATIO, log);
  queueMemory.register(metrics.registry);

  return {
    env,
    log,
    clock: options.clock ?? systemClock,
    postgres,
    db: postgres.db,
    boards: new BoardCatalog(postgres.db),
    periods: new PeriodCache(postgres.db),
    queueRedis,
    leaderboard: new LeaderboardCache(
      leaderboardRedis,
      keys,
      (err) =>
        failures.warn(
          'leaderboard-redis',
          err,
          'a projection was refused; its periods read from Postgres until rebuilt',
        ),
      () =>
        void new KeyLayoutRecord(leaderboardRedis, env.REDIS_PREFIX)
          .noteEarlierWrites(env.LAYOUT_QUIET_MS)
          .catch((err: Error) => failures.warn('leaderboard-redis', err, 'could not record a 0.2.0 write')),
    ),
    members: new MemberDirectory(postgres.db, memberChanges),
    fallback: new FallbackReads(fallbackPostgres.db, env.FALLBACK_MAX_CONCURRENT),
    scoreQueue,
    rebuildQueue,
    rebuildFlow,
    periodsQueue,
    webhooksQueue,
    metrics,
    queueMemory,
    failures,
    faults: options.faults ?? {},
    failureOf: (err) => storageFailure(err, { 'queue-redis': queueRedis, 'leaderboard-redis': leaderboardRedis }),
    async close() {
      await scoreQueue.close().catch(() => undefined);
      await rebuildQueue.close().catch(() => undefined);
      await rebuildFlow.close().catch(() => undefined);
      await periodsQueue.close().catch(() => undefined);
      await webhooksQueue.close().catch(() => undefined);
      memberChanges.close();
      queueRedis.disconnect();
      leaderboardRedis.disconnect();
      await postgres.db.destroy();
      await fallbackPostgres.db.destroy();
    },
  };
}
