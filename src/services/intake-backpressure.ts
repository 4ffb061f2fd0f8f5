import { Gauge, type Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { Unavailable } from '../domain/errors.js';
import type { RedisClient } from '../storage/redis/connections.js';
import { readMemoryUsage, type MemoryUsage } from '../storage/redis/memory-usage.js';

/** How long a memory reading is used before the next is taken (SPEC-free; the "at most every second"). */
const READ_INTERVAL_MS = 1000;
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
  /** Bytes of job data enqueued since the reading in hand was asked for: counted until the next one. */
  private sinceReading = 0;
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
      const counted = this.sinceReading;
      this.reading = readMemoryUsage(this.redis)
        .then((u) => {
          this.last = u;
          this.sinceReading -= counted;
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
   * `bytes` safely. Between readings the batches accepted since are added to the last one,
   * so a burst within one second cannot overrun it.
   */
  async assertRoom(bytes: number): Promise<void> {
    const u = await this.usage();
    if (!u || u.maxBytes === 0) return;
    const used = u.usedBytes + this.sinceReading + bytes;
    if (used < u.maxBytes * this.refuseRatio) {
      this.sinceReading += bytes;
      return;
    }
    const percent = Math.round((used / u.maxBytes) * 100);
    throw this.full(`the event queue is full (queue Redis at ${percent}% of its memory limit); nothing was accepted, retry later`);
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
