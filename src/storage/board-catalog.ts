import type { Board } from '../domain/board.js';
import { Unavailable } from '../domain/errors.js';
import { BOARD_ID } from '../domain/ids.js';
import type { Db } from './postgres/database.js';
import { findBoards, listBoards } from './postgres/boards-repository.js';

/**
 * Board definitions, cached briefly per process. Only found boards are cached, so a board
 * created a moment ago is never reported missing; a change made through another process
 * is seen within `ttlMs`, and workers detect a stale revision in the apply function itself.
 * The list of every board is cached the same way (a read across boards then costs no
 * Postgres round trip); a board this process creates or changes is in it at once.
 *
 * While Postgres is down, a definition seen within `staleMs` is served past its expiry, so
 * intake and reads go on through an outage of minutes: a board changed meanwhile is caught by
 * the revision check of the apply function, which runs once Postgres is back anyway.
 */
export class BoardCatalog {
  private readonly cache = new Map<string, { board: Board; until: number }>();
  private all: { boards: Board[]; until: number } | undefined;
  /** The last listing read, kept past `all`'s expiry for an outage. */
  private lastListing: { boards: Board[]; until: number } | undefined;
  /** Lookups in flight: concurrent misses of a board share one, so an expiry costs one round trip. */
  private readonly loading = new Map<string, Promise<Board | undefined>>();
  private listing: Promise<Board[]> | undefined;

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 2000,
    private readonly staleMs = 300_000,
  ) {}

  /** The Postgres answer, or, while Postgres is down, `stale()` when it has one within `staleMs`. */
  private async orStale<T>(lookup: Promise<T>, stale: () => T | undefined): Promise<T> {
    try {
      return await lookup;
    } catch (err) {
      const fallback = err instanceof Unavailable ? stale() : undefined;
      if (fallback === undefined) throw err;
      return fallback;
    }
  }

  private seenLately(id: string, now: number): Board | undefined {
    const hit = this.cache.get(id);
    return hit && now - hit.until < this.staleMs ? hit.board : undefined;
  }

  async getMany(ids: Iterable<string>, options: { fresh?: boolean } = {}): Promise<Map<string, Board>> {
    // A malformed id names no board: no need to ask Postgres (and no odd bytes reach it).
    const wanted = [...new Set(ids)].filter((id) => BOARD_ID.test(id));
    const found = new Map<string, Board>();
    const missing: string[] = [];
    const now = Date.now();
    for (const id of wanted) {
      const hit = this.cache.get(id);
      if (hit && hit.until > now && !options.fresh) found.set(id, hit.board);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    // Misses already being looked up join that lookup (not for `fresh`, which wants its own
    // read); the rest are looked up together, in one round trip.
    const joined = options.fresh ? [] : missing.filter((id) => this.loading.has(id));
    const own = missing.filter((id) => !joined.includes(id));
    const lookup = own.length > 0 ? this.lookUp(own, now, options.fresh === true) : undefined;
    if (lookup && !options.fresh) {
      for (const id of own) {
        const one = lookup.then((boards) => boards.get(id));
        this.loading.set(id, one);
        void one.finally(() => this.loading.delete(id)).catch(() => undefined);
      }
    }
    const boards = await Promise.all([
      ...joined.map((id) => this.loading.get(id)!),
      ...(lookup ? [lookup.then((m) => [...m.values()])] : []),
    ]);
    for (const board of boards.flat()) if (board) found.set(board.id, board);
    return found;
  }

  private async lookUp(ids: string[], now: number, fresh: boolean): Promise<Map<string, Board>> {
    const stale = () => {
      const boards = ids.map((id) => this.seenLately(id, now));
      return boards.every((b) => b !== undefined) && !fresh ? boards : undefined;
    };
    const found = new Map<string, Board>();
    for (const board of await this.orStale(findBoards(this.db, ids), stale)) {
      if (this.cache.get(board.id)?.board !== board) this.remember(board);
      found.set(board.id, board);
    }
    return found;
  }

  async get(id: string): Promise<Board | undefined> {
    // Every standings read starts here: a cache hit allocates nothing.
    const hit = this.cache.get(id);
    if (hit && hit.until > Date.now()) return hit.board;
    return (await this.getMany([id])).get(id);
  }

  /** Every board, in id order. */
  async list(): Promise<Board[]> {
    if (this.all && this.all.until > Date.now()) return this.all.boards;
    const last = this.lastListing;
    const stale = () => (last && Date.now() - last.until < this.staleMs ? last.boards : undefined);
    this.listing ??= this.orStale(listBoards(this.db), stale)
      .then((boards) => {
        if (boards === last?.boards) return boards;
        for (const board of boards) this.cache.set(board.id, { board, until: Date.now() + this.ttlMs });
        this.all = { boards, until: Date.now() + this.ttlMs };
        this.lastListing = this.all;
        return boards;
      })
      .finally(() => (this.listing = undefined));
    return this.listing;
  }

  remember(board: Board): void {
    this.cache.set(board.id, { board, until: Date.now() + this.ttlMs });
    this.all = undefined;
  }

  forget(id: string): void {
    this.cache.delete(id);
    this.all = undefined;
  }
}
