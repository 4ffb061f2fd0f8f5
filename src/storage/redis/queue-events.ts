import { QueueEvents, QueueKeys } from 'bullmq';
import type { Env } from '../../config/env.js';
import type { Logger } from '../../logger.js';
import { SCORE_EVENTS_QUEUE, queuePrefix } from '../../queue/score-events-queue.js';
import { createWorkerRedis, onConnectionError, queueTarget, type RedisClient } from './connections.js';

/**
 * Waits for score jobs to finish (`?wait=true`) by reading BullMQ's events stream of the
 * score queue. The listener holds a blocking Redis connection of its own, so it is opened on
 * the first wait, and opened again on the next wait if opening failed.
 */
export class ScoreJobListener {
  private events: Promise<QueueEvents> | undefined;
  private readonly connections: RedisClient[] = [];

  constructor(
    private readonly env: Env,
    private readonly log: Logger,
  ) {}

  /** Resolves once the listener reads the stream; the caller bounds how long it waits for that. */
  open(): Promise<QueueEvents> {
    return (this.events ??= this.connect().catch((err: unknown) => {
      this.events = undefined;
      throw err;
    }));
  }

  async close(): Promise<void> {
    await this.events?.then((events) => events.close()).catch(() => undefined);
    for (const connection of this.connections) connection.disconnect();
  }

  private async connect(): Promise<QueueEvents> {
    const connection = createWorkerRedis(queueTarget(this.env), 'laurel-queue-events');
    onConnectionError(connection, () => undefined);
    const prefix = queuePrefix(this.env.REDIS_PREFIX, SCORE_EVENTS_QUEUE);
    // Read on from the stream's end as it is now, not from wherever it is when the blocking
    // read reaches Redis (later, on a cluster's lazily connected node): a job finishing in
    // between would otherwise be missed and its ?wait=true time out.
    const last = await connection.xrevrange(new QueueKeys(prefix).toKey(SCORE_EVENTS_QUEUE, 'events'), '+', '-', 'COUNT', 1).catch((err: unknown) => {
      connection.disconnect();
      throw err;
    });
    const events = new QueueEvents(SCORE_EVENTS_QUEUE, { connection, prefix, lastEventId: last[0]?.[0] ?? '0-0' });
    events.on('error', (err) => this.log.warn({ err: err.message }, 'queue events error'));
    // BullMQ does not close a connection it was handed: ours goes when the listener closes.
    this.connections.push(connection);
    return events;
  }
}

/**
 * Deletes the entries of BullMQ events streams (capped by BullMQ, ~10,000 entries each)
 * whose fields contain `text`: a finished job's return value may name a member through its
 * idempotency keys, and an erasure leaves no trace of the member (docs/api.md, Erasure). Read in pages.
 */
export async function forgetInEventStreams(redis: RedisClient, streams: readonly string[], text: string): Promise<number> {
  const PAGE = 1000;
  let deleted = 0;
  for (const stream of streams) {
    let start = '-';
    for (;;) {
      const entries = await redis.xrange(stream, start, '+', 'COUNT', PAGE);
      const matching = entries.filter(([, fields]) => fields.some((f) => f.includes(text))).map(([id]) => id);
      if (matching.length > 0) deleted += await redis.xdel(stream, ...matching);
      if (entries.length < PAGE) break;
      start = `(${entries[entries.length - 1]![0]}`;
    }
  }
  return deleted;
}
