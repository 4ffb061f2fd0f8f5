import type { Logger } from '../logger.js';

/**
 * Logs a dependency's failures at most once per interval: the first one at once, later ones
 * counted and reported with the next line (`repeated`: how many were not written since).
 * A dependency that is down makes every connection and job fail many times a second; one
 * line per dependency per interval says as much and keeps the logs readable.
 */
export class RepeatLimitedLog {
  private readonly last = new Map<string, { at: number; repeated: number }>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** `dependency` undefined: an outage whose dependency is not known, limited as one more. */
  warn(named: string | undefined, err: Error | string, msg: string, fields: Record<string, unknown> = {}): void {
    const dependency = named ?? 'unnamed';
    const now = this.now();
    const seen = this.last.get(dependency);
    if (seen && now - seen.at < this.intervalMs) {
      seen.repeated += 1;
      return;
    }
    const repeated = seen?.repeated ?? 0;
    this.last.set(dependency, { at: now, repeated: 0 });
    this.log.warn(
      { ...fields, dependency, err: typeof err === 'string' ? err : err.message, ...(repeated ? { repeated } : {}) },
      msg,
    );
  }
}
