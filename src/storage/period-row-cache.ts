import type { Db } from './postgres/database.js';
import { findPeriods, type StoredPeriod } from './postgres/periods-repository.js';

/**
 * Period rows, cached for a moment per process: every standings read needs its period, and
 * a row changes only when the period closes. Only found rows are cached (a period created a
 * moment ago is never reported missing); a close in another process is seen within `ttlMs`,
 * and the process that closes a period forgets it at once.
 */
export class PeriodCache {
  private readonly cache = new Map<string, { period: StoredPeriod; until: number }>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 1000,
  ) {}

  async getMany(refs: ReadonlyArray<{ boardId: string; key: string }>): Promise<StoredPeriod[]> {
    const now = Date.now();
    const found: StoredPeriod[] = [];
    const missing: Array<{ boardId: string; key: string }> = [];
    for (const ref of refs) {
      const hit = this.cache.get(`${ref.boardId}|${ref.key}`);
      if (hit && hit.until > now) found.push(hit.period);
      else missing.push(ref);
    }
    if (missing.length > 0) {
      for (const period of await findPeriods(this.db, missing)) {
        this.cache.set(`${period.boardId}|${period.key}`, { period, until: now + this.ttlMs });
        found.push(period);
      }
    }
    return found;
  }

  forget(boardId: string, key: string): void {
    this.cache.delete(`${boardId}|${key}`);
  }
}
