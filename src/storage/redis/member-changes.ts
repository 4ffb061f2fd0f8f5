import { isCluster, type RedisClient } from './connections.js';

/** Marks an erasure's notice; a member id has no space, so no id reads as one. */
const ERASED = 'erased ';

/**
 * "Member changed" notices between processes (display name, follow list), on the
 * leaderboard Redis's pub/sub: every web process drops its cached copy of that member, and
 * after an erasure also every cached follow list naming them. Pub/sub stores nothing.
 */
export class MemberChanges {
  private subscriber: RedisClient | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  private get channel(): string {
    return `${this.prefix}:members:changed`;
  }

  async publish(member: string, erased = false): Promise<void> {
    await this.redis.publish(this.channel, erased ? ERASED + member : member);
  }

  /**
   * Calls `onChange(member, erased)` for every notice, and `onReset()` whenever the subscription
   * is (re)established or lost: notices sent while it was down are gone, so the caller
   * must stop trusting what it cached.
   */
  listen(handlers: { onChange(member: string, erased: boolean): void; onReset(live: boolean): void }): void {
    if (this.subscriber) return;
    const subscriber: RedisClient = isCluster(this.redis) ? this.redis.duplicate() : this.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, notice: string) =>
      notice.startsWith(ERASED)
        ? handlers.onChange(notice.slice(ERASED.length), true)
        : handlers.onChange(notice, false),
    );
    subscriber.on('close', () => handlers.onReset(false));
    // ioredis re-subscribes on reconnect and emits ready again: each time, a fresh start.
    subscriber.on('ready', () => {
      subscriber.subscribe(this.channel).then(
        () => handlers.onReset(true),
        () => handlers.onReset(false),
      );
    });
  }

  close(): void {
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
