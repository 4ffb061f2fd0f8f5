import type { Clock } from '../../src/clock.js';

/** A clock the test sets; it follows real time until set. */
export class ManualClock implements Clock {
  private fixed: Date | null = null;

  now(): Date {
    return this.fixed ? new Date(this.fixed) : new Date();
  }

  set(at: Date | string): void {
    this.fixed = new Date(at);
  }

  advance(ms: number): void {
    this.fixed = new Date(this.now().getTime() + ms);
  }
}
