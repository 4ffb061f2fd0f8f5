import { isCluster, type RedisClient } from './connections.js';

/**
 * "Member changed" notices between processes (display name, follow list), on the
 * leaderboard Redis's pub/sub: every web process drops its cached copy of that member.
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

  async publish(member: string): Promise<void> {
    await this.redis.publish(this.channel, member);
  }

  /**
   * Calls `onChange(member)` for every notice, and `onReset()` whenever the subscription
   * is (re)established or lost: notices sent while it was down are gone, so the caller
   * must stop trusting what it cached.
   */
  listen(handlers: { onChange(member: string): void; onReset(live: boolean): void }): void {
    if (this.subscriber) return;
    const subscriber: RedisClient = isCluster(this.redis) ? this.redis.duplicate() : this.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, member: string) => handlers.onChange(member));
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
