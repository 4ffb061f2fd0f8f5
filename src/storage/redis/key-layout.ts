import type { RedisClient } from './connections.js';

/**
 * The key layout this release reads and writes in the leaderboard Redis (leaderboard-keys.ts).
 * Layout 1 was 0.2.0's (one state hash per category, `:s:<category>`), which kept no record of
 * itself; from layout 2 on the Redis names its layout, and a release raises this number when
 * it changes how any key is written.
 */
export const KEY_LAYOUT = 2;

/** What one look at the layout record found. */
export interface LayoutView {
  /** The layout the Redis is written in (claimed for this release if it named none). */
  layout: number;
  /** Writes of an earlier layout were seen within the quiet interval: the cache may be wrong. */
  mixed: boolean;
  /** Writes of an earlier layout were seen since the last handover: a rebuild is owed. */
  handoverOwed: boolean;
}

/**
 * The layout record, a few keys sharing the hash tag {layout} (one slot, so one transaction
 * reads them all, on a cluster too):
 *
 *   <prefix>:lb:{layout}:version      the layout number the Redis is written in
 *   <prefix>:lb:{layout}:mixed        set (expiring) while writes of an earlier layout are seen
 *   <prefix>:lb:{layout}:handover     set when such writes were seen; the handover clears it
 *   <prefix>:lb:{layout}:lock         held by the one worker running the handover
 *   <prefix>:lb:{layout}:writers:<n>  refreshed by every process that writes layout n: what a
 *                                     later release waits on before it takes the Redis over
 */
export class KeyLayoutRecord {
  private readonly base: string;

  constructor(
    private readonly redis: RedisClient,
    prefix: string,
  ) {
    this.base = `${prefix}:lb:{layout}`;
  }

  /**
   * Claims the Redis for this release's layout if it names none (new, flushed, or last
   * written by 0.2.0), then reads the record; a writer also renews its presence for `aliveMs`.
   * One round trip.
   */
  async look(options: { writerAliveMs?: number } = {}): Promise<LayoutView> {
    const tx = this.redis.multi();
    tx.set(`${this.base}:version`, String(KEY_LAYOUT), 'NX');
    tx.get(`${this.base}:version`);
    tx.exists(`${this.base}:mixed`);
    tx.exists(`${this.base}:handover`);
    if (options.writerAliveMs)
      tx.set(`${this.base}:writers:${KEY_LAYOUT}`, String(Date.now()), 'PX', options.writerAliveMs);
    const replies = (await tx.exec()) ?? [];
    const failed = replies.find(([err]) => err)?.[0];
    if (failed) throw failed;
    return {
      layout: Number(replies[1]![1]),
      mixed: replies[2]![1] === 1,
      handoverOwed: replies[3]![1] === 1,
    };
  }

  /** Writes of an earlier layout were seen: the cache is not trusted for `quietMs`, and a handover is owed. */
  async noteEarlierWrites(quietMs: number): Promise<void> {
    const tx = this.redis.multi();
    tx.set(`${this.base}:mixed`, String(Date.now()), 'PX', quietMs);
    tx.set(`${this.base}:handover`, String(Date.now()));
    await tx.exec();
  }

  /** The one worker to run a handover holds this for up to `ttlMs`; false if another does. */
  async lockHandover(owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`${this.base}:lock`, owner, 'PX', ttlMs, 'NX')) === 'OK';
  }

  /**
   * The handover's last step, in one transaction: the flag goes unless writes of an earlier
   * layout were seen again meanwhile (then the next handover runs), and the lock is released.
   */
  async finishHandover(): Promise<void> {
    await this.redis.eval(
      `if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('DEL', KEYS[2]) end
       redis.call('DEL', KEYS[3])
       return 1`,
      3,
      `${this.base}:mixed`,
      `${this.base}:handover`,
      `${this.base}:lock`,
    );
  }

  /** Releases the lock if `owner` still holds it. */
  async releaseHandover(owner: string): Promise<void> {
    await this.redis.eval(
      `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1`,
      1,
      `${this.base}:lock`,
      owner,
    );
  }
}
