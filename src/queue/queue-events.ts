import { QueueEvents, QueueKeys } from 'bullmq';
import type { Env } from '../config/env.js';
import type { Logger } from '../logger.js';
import { SCORE_EVENTS_QUEUE } from './score-events-queue.js';
import { queuePrefix } from './enqueue.js';
import { createWorkerRedis, onConnectionError, queueTarget, type RedisClient } from '../storage/redis/connections.js';

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
    const last = await connection
      .xrevrange(new QueueKeys(prefix).toKey(SCORE_EVENTS_QUEUE, 'events'), '+', '-', 'COUNT', 1)
      .catch((err: unknown) => {
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
