import type { Db } from './postgres/database.js';
import { findPeriods, type StoredPeriod } from './postgres/periods-repository.js';

/**
 * Period rows, cached for a moment per process: every standings read needs its period, and
 * a row changes only when the period closes. Only found rows are cached (a period created a
 * moment ago is never reported missing); a close in another process is seen within `ttlMs`,
 * and the process that closes a period forgets it at once. Concurrent misses of a row share
 * one lookup, so its expiry costs one round trip, not one per request in flight.
 */
export class PeriodCache {
  private readonly cache = new Map<string, { period: StoredPeriod; until: number }>();
  private readonly loading = new Map<string, Promise<StoredPeriod | undefined>>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 1000,
  ) {}

  async getMany(refs: ReadonlyArray<{ boardId: string; key: string }>): Promise<StoredPeriod[]> {
    const now = Date.now();
    const found: StoredPeriod[] = [];
    const waiting: Array<Promise<StoredPeriod | undefined>> = [];
    const missing: Array<{ boardId: string; key: string }> = [];
    for (const ref of refs) {
      const id = `${ref.boardId}|${ref.key}`;
      const hit = this.cache.get(id);
      const pending = this.loading.get(id);
      if (hit && hit.until > now) found.push(hit.period);
      else if (pending) waiting.push(pending);
      else missing.push(ref);
    }
    if (missing.length > 0) {
      const lookup = findPeriods(this.db, missing).then((periods) => {
        const byId = new Map(periods.map((p) => [`${p.boardId}|${p.key}`, p]));
        for (const [id, period] of byId) this.cache.set(id, { period, until: Date.now() + this.ttlMs });
        return byId;
      });
      for (const ref of missing) {
        const id = `${ref.boardId}|${ref.key}`;
        const one = lookup.then((byId) => byId.get(id));
        this.loading.set(id, one);
        void one.finally(() => this.loading.delete(id)).catch(() => undefined);
        waiting.push(one);
      }
    }
    for (const period of await Promise.all(waiting)) if (period) found.push(period);
    return found;
  }

  forget(boardId: string, key: string): void {
    this.cache.delete(`${boardId}|${key}`);
  }
}
