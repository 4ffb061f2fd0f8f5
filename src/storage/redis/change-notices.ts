import type { Redis, Cluster } from 'ioredis';
import { createSubscriberRedis, onConnectionError, type RedisTarget } from './connections.js';

/**
 * Change notices: after each projection the worker publishes one short message per changed
 * (board, period) on the period's channel (`LeaderboardKeys.changes`), sharded on a Redis
 * Cluster (SPUBLISH / SSUBSCRIBE: the channel carries the period's hash tag, so it lives on
 * the node of the period's keys and the publish rides in the projection's pipeline). A
 * notice says only "this period changed at t" or "this period closed": web processes read
 * the new standings themselves, once per scope, whatever the number of streams.
 */
export type Notice = { kind: 'changed'; at: number } | { kind: 'closed' };

export const changedNotice = (at: number): string => `c${at}`;
export const closedNotice = (): string => 'x';

export function parseNotice(message: string): Notice | null {
  if (message === 'x') return { kind: 'closed' };
  const at = Number(message.slice(1));
  return message.startsWith('c') && Number.isFinite(at) ? { kind: 'changed', at } : null;
}

/**
 * One subscriber connection of a web process. Pub/sub is at most once: `onUp` fires after
 * every (re)connection, since notices published while it was down are lost and the caller
 * must re-read what it watches. ioredis re-subscribes the channels by itself.
 */
export class NoticeSubscriber {
  private readonly redis: Redis | Cluster;
  private up = false;
  private closing = false;

  constructor(
    target: RedisTarget,
    handlers: {
      onNotice: (channel: string, notice: Notice) => void;
      onUp: () => void;
      onDown: () => void;
      onError: (err: Error) => void;
    },
  ) {
    this.redis = createSubscriberRedis(target, 'laurel-notices');
    onConnectionError(this.redis, handlers.onError);
    this.redis.on('smessage', (channel: string, message: string) => {
      const notice = parseNotice(message);
      if (notice) handlers.onNotice(channel, notice);
    });
    this.redis.on('ready', () => {
      this.up = true;
      handlers.onUp();
    });
    this.redis.on('close', () => {
      if (!this.up) return;
      this.up = false;
      // Our own close is no loss of notices.
      if (!this.closing) handlers.onDown();
    });
  }

  get connected(): boolean {
    return this.up;
  }

  async subscribe(channel: string): Promise<void> {
    await this.redis.ssubscribe(channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    await this.redis.sunsubscribe(channel);
  }

  close(): void {
    this.closing = true;
    this.redis.disconnect();
  }
}
