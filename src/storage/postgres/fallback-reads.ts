import { Unavailable } from '../../domain/errors.js';
import type { Db } from './database.js';
import { hasPgCode, PG_ERROR } from './pg-errors.js';

// The fallback pool is Postgres: its refusals are logged with Postgres' outages.
const unavailable = (message: string) => new Unavailable(message, undefined, { dependency: 'postgres' });

/**
 * Planner settings of the fallback pool's sessions. Its reads are ranges of hot indexes,
 * whose pages are cached: a random read costs about a sequential one, so a count over a
 * board that is most of member_aggregates still takes its index-only range rather than a
 * scan of the table. No parallel workers: FALLBACK_MAX_CONCURRENT reads at once would each
 * take more cores from the rest of the service.
 */
export const FALLBACK_SESSION_SETTINGS = { random_page_cost: '1.1', max_parallel_workers_per_gather: '0' } as const;

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
      throw unavailable(
        'standings are being served from the database while the cache recovers, and it is busy; retry shortly',
      );
    }
    this.active++;
    try {
      return await read(this.db);
    } catch (err) {
      if (hasPgCode(err, PG_ERROR.queryCanceled)) {
        throw unavailable(
          'standings could not be read from the database in time while the cache recovers; retry shortly',
        );
      }
      throw err;
    } finally {
      this.active--;
    }
  }
}
