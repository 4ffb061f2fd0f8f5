import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { Unavailable } from '../domain/errors.js';
import type { RedisClient } from '../storage/redis/connections.js';
import { readMemoryUsage, type MemoryUsage } from '../storage/redis/memory-usage.js';

/** How long a memory reading is used before the next is taken (at most one reading a second). */
const READ_INTERVAL_MS = 1000;
/**
 * What a batch costs the queue Redis for each byte of its job's JSON: the job hash holding the
 * data, its queue event, and a pending mark per event key. Taken high: an estimate that is
 * too low lets a fast burst between two readings run Redis out of memory.
 */
const REDIS_BYTES_PER_JOB_BYTE = 2;
/** Retry-After of a refusal: long enough for the workers to drain part of the backlog. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Intake's backpressure: the queue Redis runs with noeviction, so once it is full every
 * BullMQ add fails at Redis level. Intake refuses earlier, with 503 and Retry-After, when
 * the queue Redis uses more than QUEUE_MEMORY_REFUSE_RATIO of its maxmemory. The reading is
 * taken at most once a second (INFO memory), in the background of the requests that need
 * it: a request waits only for the very first reading. A Redis without maxmemory is never
 * refused here (a down one is refused by intake's own status check). Should Redis refuse a
 * write all the same (OOM), intake answers the same 503.
 */
export class QueueMemoryGuard {
  private last: MemoryUsage | null = null;
  private readAt = 0;
  /** Bytes of job data let through so far (never decreases). */
  private counted = 0;
  /**
   * `counted` when the reading before the one in hand was asked for. A batch let through may
   * still be on its way to Redis when a reading is asked for, so the reading in hand is only
   * sure to hold what was counted before the reading ahead of it: the rest is added to it.
   */
  private settledCount = 0;
  /** `counted` when the reading in hand (or in flight) was asked for. */
  private askedCount = 0;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly refuseRatio: number,
    private readonly log: Logger,
  ) {}

  /** The latest reading, refreshed when older than a second; null until one succeeded. */
  async usage(): Promise<MemoryUsage | null> {
    if (Date.now() - this.readAt >= READ_INTERVAL_MS && !this.reading) {
      this.readAt = Date.now();
      const asked = this.counted;
      this.reading = readMemoryUsage(this.redis)
        .then((u) => {
          this.last = u;
          this.settledCount = this.askedCount;
          this.askedCount = asked;
        })
        .catch((err: Error) => this.log.debug({ err: err.message }, 'queue Redis memory not read'))
        .finally(() => {
          this.reading = null;
        });
      if (this.last === null) await this.reading;
    }
    return this.last;
  }

  /**
   * Throws 503 with Retry-After when the queue Redis is too full to accept a batch of
   * `bytes` safely. The batches accepted since the reading before the last one are added to
   * the last one (some of them may be in it twice: erring on the side of refusing), so a
   * burst within one second, or a batch still in flight when Redis was read, cannot overrun it.
   */
  async assertRoom(jobBytes: number): Promise<void> {
    const bytes = jobBytes * REDIS_BYTES_PER_JOB_BYTE;
    const u = await this.usage();
    if (!u || u.maxBytes === 0) return;
    const used = u.usedBytes + (this.counted - this.settledCount) + bytes;
    if (used < u.maxBytes * this.refuseRatio) {
      this.counted += bytes;
      return;
    }
    const percent = Math.round((used / u.maxBytes) * 100);
    throw this.full(
      `the event queue is full (queue Redis at ${percent}% of its memory limit); nothing was accepted, retry later`,
    );
  }

  /** The refusal, for Redis' own OOM answer too: nothing was accepted, retrying later is safe. */
  full(message: string): Unavailable {
    return new Unavailable(message, undefined, { retryAfterSeconds: RETRY_AFTER_SECONDS, dependency: 'queue-redis' });
  }

  /** laurel_queue_redis_memory_bytes{kind="used"|"max"}, read at scrape time through the same one-second reading. */
  register(registry: Registry): void {
    const usage = () => this.usage();
    new Gauge({
      name: 'laurel_queue_redis_memory_bytes',
      help: 'Memory of the queue Redis: used_memory and maxmemory (0 = no limit)',
      labelNames: ['kind'] as const,
      registers: [registry],
      aggregator: 'first',
      async collect() {
        const u = await usage();
        if (!u) return;
        this.set({ kind: 'used' }, u.usedBytes);
        this.set({ kind: 'max' }, u.maxBytes);
      },
    });
  }
}

/** Retry-After of a refusal for queue lag: a backlog takes a while to drain. */
const LAG_RETRY_AFTER_SECONDS = 5;

/**
 * Load shedding by queue lag (INTAKE_MAX_QUEUE_LAG_MS; 0: off): when the oldest score job
 * still waiting was queued longer ago than that, the workers are far behind, and intake
 * answers 503 with Retry-After at once rather than adding to a backlog whose events would
 * become visible minutes late. The oldest job is read at most once a second, in the
 * background of the requests (only the very first request waits for it).
 */
export class QueueLagGuard {
  private oldestQueuedAt: number | undefined;
  private readAt = 0;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly oldestWaiting: () => Promise<number | undefined>,
    private readonly maxLagMs: number,
    private readonly log: Logger,
  ) {}

  async assertFresh(): Promise<void> {
    if (this.maxLagMs === 0) return;
    if (Date.now() - this.readAt >= READ_INTERVAL_MS && !this.reading) {
      const first = this.readAt === 0;
      this.readAt = Date.now();
      this.reading = this.oldestWaiting()
        .then((at) => void (this.oldestQueuedAt = at))
        .catch((err: Error) => this.log.debug({ err: err.message }, 'queue lag not read'))
        .finally(() => (this.reading = null));
      if (first) await this.reading;
    }
    const lag = this.oldestQueuedAt === undefined ? 0 : Date.now() - this.oldestQueuedAt;
    if (lag > this.maxLagMs)
      throw new Unavailable(
        `the event queue is ${Math.round(lag / 1000)} s behind (INTAKE_MAX_QUEUE_LAG_MS); nothing was accepted, retry later`,
        undefined,
        { retryAfterSeconds: LAG_RETRY_AFTER_SECONDS },
      );
  }
}
