import type { Board } from '../../domain/board.js';
import { decodeEntry, encodeEntry, scaledFromSortScore, sortScore } from '../../domain/ranking.js';
import type { AggregateState } from '../postgres/events-repository.js';
import type { LeaderboardKeys } from './leaderboard-keys.js';
import type { LeaderboardRedis } from './scripts.js';

/**
 * The derived sorted sets: writes (projection of Postgres aggregates) and reads
 * (slices and single placements), each one round trip.
 */
export class LeaderboardCache {
  constructor(
    readonly redis: LeaderboardRedis,
    readonly keys: LeaderboardKeys,
  ) {}

  /**
   * Projects aggregates into their scopes, one script call per (board, period), all in one
   * pipeline. Each aggregate carries its version, and the script keeps the highest one, so
   * projecting in any order, twice, or concurrently ends in the same state.
   * `extraWrite` lets the caller add commands to the same round trip.
   */
  async project(
    aggregates: readonly AggregateState[],
    boards: ReadonlyMap<string, Board>,
    extraWrite?: (pipeline: ReturnType<LeaderboardRedis['pipeline']>) => void,
  ): Promise<void> {
    const byPeriod = new Map<string, string[]>();
    for (const a of aggregates) {
      const board = boards.get(a.board);
      if (!board) throw new Error(`projection of unknown board ${a.board}`);
      const base = this.keys.period(a.board, a.period);
      let args = byPeriod.get(base);
      if (!args) byPeriod.set(base, (args = []));
      const entry = a.hidden ? '' : encodeEntry(board.tieBreak, a.reachedSec, a.member);
      args.push(a.category, a.member, String(a.version), sortScore(board.order, BigInt(a.value)), entry, a.region ?? '');
    }
    if (byPeriod.size === 0 && !extraWrite) return;
    const pipeline = this.redis.pipeline();
    for (const [base, args] of byPeriod) {
      (pipeline as unknown as { laurelProject(...a: string[]): void }).laurelProject(base, ...args);
    }
    extraWrite?.(pipeline);
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }

  async slice(board: Board, period: string, category: string, region: string, offset: number, limit: number): Promise<Slice> {
    const scope = this.keys.scope(board.id, period, category, region);
    const [total, first, items] = await this.redis.laurelSlice(scope, offset, limit, sharedFlag(board));
    return { total, entries: rankedEntries(board, offset, first, items) };
  }

  /** The member and up to `radius` neighbours on each side; no entries when the member is unranked. */
  async around(board: Board, period: string, category: string, region: string, member: string, radius: number): Promise<Slice> {
    const scope = this.keys.scope(board.id, period, category, region);
    const state = this.keys.state(board.id, period, category);
    const [total, from, first, items] = await this.redis.laurelAround(scope, state, member, radius, sharedFlag(board));
    if (from === undefined || first === undefined || !items) return { total, entries: [] };
    return { total, entries: rankedEntries(board, from, first, items) };
  }

  /**
   * The entries of the given members that are ranked in the scope, in scope order: one
   * round trip (HMGET + ZMSCORE), O(k log N) for k members whatever their ranks.
   */
  async pick(board: Board, period: string, category: string, region: string, members: readonly string[]): Promise<PickedEntry[]> {
    if (members.length === 0) return [];
    const scope = this.keys.scope(board.id, period, category, region);
    const state = this.keys.state(board.id, period, category);
    const flat = await this.redis.laurelPick(scope, state, ...members);
    const picked: PickedEntry[] = [];
    for (let i = 0; i < flat.length; i += 3) {
      picked.push({ member: flat[i]!, entry: flat[i + 1]!, sortScore: Number(flat[i + 2]!), scaled: scaledFromSortScore(board.order, flat[i + 2]!) });
    }
    // Redis order: by score, then by entry bytes (entries are ASCII, so code units are bytes).
    return picked.sort((a, b) => a.sortScore - b.sortScore || (a.entry < b.entry ? -1 : a.entry > b.entry ? 1 : 0));
  }

  async place(board: Board, period: string, category: string, region: string, member: string): Promise<Placed> {
    const [placed] = await this.placeMany([{ board, period, category, region, member }]);
    return placed!;
  }

  /** Placements of many members, possibly on many boards, in one pipeline. */
  async placeMany(
    queries: ReadonlyArray<{ board: Board; period: string; category: string; region: string; member: string }>,
  ): Promise<Placed[]> {
    if (queries.length === 0) return [];
    const pipeline = this.redis.pipeline() as unknown as {
      laurelPlace(scope: string, state: string, member: string, shared: string): void;
      exec(): Promise<Array<[Error | null, unknown]> | null>;
    };
    for (const q of queries) {
      pipeline.laurelPlace(
        this.keys.scope(q.board.id, q.period, q.category, q.region),
        this.keys.state(q.board.id, q.period, q.category),
        q.member,
        q.board.tieBreak === 'shared' ? '1' : '0',
      );
    }
    const replies = (await pipeline.exec()) ?? [];
    return replies.map(([err, reply], i) => {
      if (err) throw err;
      const [total, rank0, score] = reply as [number, number?, string?];
      if (rank0 === undefined || score === undefined) return { total, rank: null, scaled: null };
      return { total, rank: rank0 + 1, scaled: scaledFromSortScore(queries[i]!.board.order, score) };
    });
  }
}

function sharedFlag(board: Board): string {
  return board.tieBreak === 'shared' ? '1' : '0';
}

/**
 * Ranks of consecutive entries starting at index `offset`. With `shared`, the first entry's
 * rank comes from Redis (count of strictly better scores + 1) and equal scores share it.
 */
function rankedEntries(board: Board, offset: number, firstRank0: number, items: readonly string[]): SliceEntry[] {
  const entries: SliceEntry[] = [];
  let previousScore: string | undefined;
  for (let i = 0; i < items.length; i += 2) {
    const position = offset + i / 2;
    const score = items[i + 1]!;
    let rank: number;
    if (board.tieBreak !== 'shared') rank = position + 1;
    else if (i === 0) rank = firstRank0 + 1;
    else rank = score === previousScore ? entries[entries.length - 1]!.rank : position + 1;
    previousScore = score;
    entries.push({ rank, member: decodeEntry(board.tieBreak, items[i]!), scaled: scaledFromSortScore(board.order, score) });
  }
  return entries;
}

export interface PickedEntry {
  member: string;
  entry: string;
  sortScore: number;
  scaled: number;
}

export interface SliceEntry {
  rank: number;
  member: string;
  scaled: number;
}

export interface Slice {
  total: number;
  entries: SliceEntry[];
}

export interface Placed {
  total: number;
  rank: number | null;
  scaled: number | null;
}
