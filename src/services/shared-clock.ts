import type { Clock } from '../clock.js';
import type { LocalTime } from '../config/warped-clock.js';
import type { Logger } from '../logger.js';
import type { Db } from '../storage/postgres/database.js';
import { databaseTimeMs } from '../storage/postgres/database-clock.js';

/** How often a process measures its clock against Postgres'. */
export const CLOCK_SYNC_MS = 30_000;

/**
 * One clock for every process: Postgres'. Period routing at intake and closing in the worker
 * read this clock, so a host whose clock is minutes off neither closes a period early nor
 * refuses correct `occurredAt` values. Each process measures its skew at start and every
 * CLOCK_SYNC_MS (one round trip: the midpoint of the request against clock_timestamp()) and
 * corrects its own clock by it; until the first measurement the host clock is used as is.
 */
export class SharedClock implements Clock {
  private offsetMs = 0;
  private measured = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly local: LocalTime) {}

  now(): Date {
    return this.local.toTime(this.local.localMs() + this.offsetMs);
  }

  skewMs(): number | undefined {
    return this.measured ? -this.offsetMs : undefined;
  }

  /** One measurement; returns the skew (host minus Postgres, ms). */
  async sync(db: Db): Promise<number> {
    const sentAt = this.local.localMs();
    const database = await databaseTimeMs(db);
    const answeredAt = this.local.localMs();
    this.offsetMs = Math.round(database - (sentAt + answeredAt) / 2);
    this.measured = true;
    return -this.offsetMs;
  }

  /**
   * Measures now and every CLOCK_SYNC_MS: `report` gets each skew (the metric), a skew past
   * `warnMs` is logged. A failed measurement keeps the last one (Postgres down is logged elsewhere).
   */
  start(db: Db, log: Logger, warnMs: number, report: (skewMs: number) => void): void {
    const measure = () =>
      this.sync(db).then(
        (skew) => {
          report(skew);
          if (Math.abs(skew) > warnMs)
            log.warn({ skewMs: skew, warnMs }, "this host's clock is off from Postgres'; Laurel corrects it");
        },
        () => undefined,
      );
    void measure();
    this.timer = setInterval(() => void measure(), CLOCK_SYNC_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
