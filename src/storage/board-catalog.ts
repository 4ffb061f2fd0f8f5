import type { Board } from '../domain/board.js';
import { BOARD_ID } from '../domain/ids.js';
import type { Db } from './postgres/database.js';
import { findBoards, listBoards } from './postgres/boards-repository.js';

/**
 * Board definitions, cached briefly per process. Only found boards are cached, so a board
 * created a moment ago is never reported missing; a change made through another process
 * is seen within `ttlMs`, and workers detect a stale revision in the apply function itself.
 * The list of every board is cached the same way (a read across boards then costs no
 * Postgres round trip); a board this process creates or changes is in it at once.
 */
export class BoardCatalog {
  private readonly cache = new Map<string, { board: Board; until: number }>();
  private all: { boards: Board[]; until: number } | undefined;
  /** Lookups in flight: concurrent misses of a board share one, so an expiry costs one round trip. */
  private readonly loading = new Map<string, Promise<Board | undefined>>();
  private listing: Promise<Board[]> | undefined;

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 2000,
  ) {}

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
    if (missing.length > 0) {
      for (const board of await findBoards(this.db, missing)) {
        this.remember(board);
        found.set(board.id, board);
      }
    }
    return found;
  }

  async get(id: string): Promise<Board | undefined> {
    // Every standings read starts here: a cache hit allocates nothing.
    const hit = this.cache.get(id);
    if (hit && hit.until > Date.now()) return hit.board;
    const pending = this.loading.get(id);
    if (pending) return pending;
    const lookup = this.getMany([id]).then((found) => found.get(id));
    this.loading.set(id, lookup);
    void lookup.finally(() => this.loading.delete(id)).catch(() => undefined);
    return lookup;
  }

  /** Every board, in id order. */
  async list(): Promise<Board[]> {
    if (this.all && this.all.until > Date.now()) return this.all.boards;
    this.listing ??= listBoards(this.db)
      .then((boards) => {
        for (const board of boards) this.cache.set(board.id, { board, until: Date.now() + this.ttlMs });
        this.all = { boards, until: Date.now() + this.ttlMs };
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
