import type { Db } from '../storage/postgres/database.js';
import { HttpError } from '../http/errors.js';

const QUERY_CANCELED = '57014';

const unavailable = (message: string) => new HttpError(503, 'unavailable', message, undefined, { 'Retry-After': '1' });

/**
 * The Postgres side of standings reads Redis cannot answer, bounded: at most `max` at once
 * in this process (one more is a 503 at once, never a queue), on a pool of its own whose
 * statements time out, so a burst of them during a Redis loss leaves intake, admin and
 * every other route their connections.
 */
export class FallbackReads {
  private active = 0;

  constructor(
    private readonly db: Db,
    private readonly max: number,
  ) {}

  get inFlight(): number {
    return this.active;
  }

  async run<T>(read: (db: Db) => Promise<T>): Promise<T> {
    if (this.active >= this.max) {
      throw unavailable('standings are being served from the database while the cache recovers, and it is busy; retry shortly');
    }
    this.active++;
    try {
      return await read(this.db);
    } catch (err) {
      if ((err as { code?: unknown }).code === QUERY_CANCELED) {
        throw unavailable('standings could not be read from the database in time while the cache recovers; retry shortly');
      }
      throw err;
    } finally {
      this.active--;
    }
  }
}
