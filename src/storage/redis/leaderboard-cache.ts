import type { Board } from '../../domain/board.js';
import {
  decodeEntry,
  entryOfAggregate,
  rankKeyOfEntry,
  scaledFromSortScore,
  sortScore,
  subscoreOfEntry,
  type Placed,
} from '../../domain/ranking.js';
import type { PeriodCategory } from '../../domain/period.js';
import type { MemberInScope, Scope } from '../../domain/scope.js';
import type { AggregateState } from '../postgres/events-repository.js';
import type { LeaderboardKeys } from './leaderboard-keys.js';
import type { LeaderboardRedis } from './scripts.js';
import { execBySlot, type KeyedCommand, type Pipeline, type Reply } from './slots.js';
import { closedNotice, changedNotice } from './change-notices.js';
import { Unavailable } from '../../domain/errors.js';
import { lagCounts } from '../../domain/lag-histogram.js';
import type { Fraction } from '../../domain/cutoffs.js';

/** Two days: well past the three hours the rollups recompute, and past a weekend's outage of the job. */
const LAG_TTL_SECONDS = 2 * 86_400;

type ScriptPipeline = Pipeline & {
  laurelProject(base: string, complete: string, ...args: string[]): void;
  laurelErase(base: string, member: string, ...categories: string[]): void;
  laurelPlace(...args: string[]): void;
  laurelLagRecord(histogram: string, ttl: number, ...bucketCounts: number[]): void;
};

/** A read Redis cannot answer: the category is not complete there (a rebuild may be running). */
export interface Miss {
  miss: true;
  rebuilding: boolean;
}

export function isMiss(value: unknown): value is Miss {
  return typeof value === 'object' && value !== null && (value as Miss).miss === true;
}

const miss = (reply: readonly unknown[]): Miss => ({ miss: true, rebuilding: reply[1] === 1 });

/**
 * What this process may do with the cache; the key layout watch decides
 * (services/key-layout-watch.ts). Reads off: the standings reader (standings/cache-first.ts)
 * answers from Postgres and asks for no rebuild; `laurel verify` still reads. Writes off:
 * projections are skipped (the Redis is written in a layout this release does not know).
 */
export interface CacheAccess {
  reads: boolean;
  writes: boolean;
}

/**
 * The derived sorted sets: writes (projection of Postgres aggregates, rebuild fills and
 * swaps) and reads (slices, placements, neighbours, picks), each one round trip. Reads
 * answer null when the category is not complete in Redis, and the caller asks Postgres.
 */
export class LeaderboardCache {
  readonly access: CacheAccess = { reads: true, writes: true };

  constructor(
    readonly redis: LeaderboardRedis,
    readonly keys: LeaderboardKeys,
    /** Told of each projection Redis refused (its periods were marked incomplete): logging is the caller's. */
    private readonly onProjectionFailure: (err: Error) => void = () => undefined,
    /** Told when a projection found state written by 0.2.0's layout (reads are off from then on). */
    private readonly onEarlierLayout: () => void = () => undefined,
  ) {}

  /**
   * Projects aggregates into their scopes, one script call per (board, period), all in one
   * round trip (on a cluster, one per hash slot, sent at once). Each aggregate carries its
   * version and the script keeps the highest, so projecting in any order, twice, or
   * concurrently ends in the same state.
   * `createdPeriods` are periods that did not exist before this batch: Redis holds all of
   * them by construction. `extraWrite` rides along in the same round trip (its slot's, on a
   * cluster). Returns the categories whose Redis copy is not known to be complete: they need a rebuild.
   *
   * The cache is right or it is not used: when Redis refuses a period's script (out of
   * memory under noeviction, or any error reply), nothing of it was written (a script is
   * atomic), so the period is no longer marked complete and any rebuild of it is called off
   * (its swap would miss this write); reads of it go to Postgres until the rebuild asked for
   * here refills it. Only a Redis that cannot be reached at all fails the call.
   */
  async project(
    aggregates: readonly AggregateState[],
    boards: ReadonlyMap<string, Board>,
    options: { createdPeriods?: ReadonlyArray<{ board: string; period: string }>; extraWrites?: KeyedCommand[] } = {},
  ): Promise<PeriodCategory[]> {
    const extraWrites = options.extraWrites ?? [];
    if (!this.access.writes) return this.skipProjection(aggregates, boards, extraWrites);
    const byPeriod = new Map<string, { board: string; period: string; complete: string; args: string[] }>();
    const group = (board: string, period: string) => {
      const base = this.keys.period(board, period);
      let g = byPeriod.get(base);
      if (!g) byPeriod.set(base, (g = { board, period, complete: '', args: [] }));
      return g;
    };
    for (const created of options.createdPeriods ?? []) {
      const board = boards.get(created.board);
      if (board) group(created.board, created.period).complete = ['all', ...board.categories].join(',');
    }
    for (const a of aggregates) {
      const board = boards.get(a.board);
      if (!board) throw new Error(`projection of unknown board ${a.board}`);
      const entry = a.hidden ? '' : entryOfAggregate(board, a);
      group(a.board, a.period).args.push(
        a.category,
        a.member,
        String(a.version),
        sortScore(board.order, BigInt(a.value)),
        entry,
        a.region ?? '',
      );
    }
    const groups = [...byPeriod.entries()];
    const commands: KeyedCommand[] = groups.map(([base, g]) => ({
      key: base,
      add: (pipeline) => (pipeline as ScriptPipeline).laurelProject(base, g.complete, ...g.args),
    }));
    commands.push(...extraWrites);
    // Watching web processes hear of each changed period from one notice, in the same round trip.
    const notice = changedNotice(Date.now());
    for (const [, g] of groups) if (g.args.length > 0) commands.push(this.noticeCommand(g.board, g.period, notice));
    const results = await execBySlot(this.redis, commands);
    const incomplete: PeriodCategory[] = [];
    const refused: Array<{ board: Board; period: string; base: string }> = [];
    let earlierLayout = false;
    groups.forEach(([base, g], i) => {
      const [err, reply] = results[i]!;
      if (err) refused.push({ board: boards.get(g.board)!, period: g.period, base });
      else {
        const [earlier, ...missing] = reply as [number, ...string[]];
        if (earlier === 1) earlierLayout = true;
        for (const category of missing) incomplete.push({ board: g.board, period: g.period, category });
      }
    });
    if (earlierLayout) {
      this.access.reads = false;
      this.onEarlierLayout();
    }
    if (refused.length > 0) {
      await this.forgetCompleteness(refused.map((r) => r.base));
      for (const { board, period } of refused)
        for (const category of ['all', ...board.categories]) incomplete.push({ board: board.id, period, category });
      this.onProjectionFailure(results.find(([err]) => err)![0]!);
    }
    // The other commands (pending marks, lags, notices) are best effort: a failed one is not the projection's.
    return incomplete;
  }

  /**
   * Writes off (a key layout this release does not know): nothing is projected, and every
   * category touched is reported incomplete, so its rebuild is requested, to be run by a
   * worker of the layout that owns the Redis. The ride-along writes (pending marks, lags) still go.
   */
  private async skipProjection(
    aggregates: readonly AggregateState[],
    boards: ReadonlyMap<string, Board>,
    extraWrites: readonly KeyedCommand[],
  ): Promise<PeriodCategory[]> {
    await execBySlot(this.redis, extraWrites);
    const touched = new Map<string, PeriodCategory>();
    for (const a of aggregates)
      for (const category of ['all', ...(boards.get(a.board)?.categories ?? [])])
        touched.set(`${a.board}|${a.period}|${category}`, { board: a.board, period: a.period, category });
    return [...touched.values()];
  }

  /** Drops the periods' completeness marks and calls off their rebuilds (deletions: allowed over maxmemory). */
  private async forgetCompleteness(bases: readonly string[]): Promise<void> {
    const results = await execBySlot(
      this.redis,
      bases.map((base) => ({ key: base, add: (pipeline) => pipeline.del(`${base}:ok`, `${base}:rb`) })),
    );
    const failed = results.find(([err]) => err)?.[0];
    if (failed) throw failed;
  }

  /**
   * Takes a member out of every category of the given periods (erasure): one script per
   * period, atomic there, all in one round trip (one per slot on a cluster), with a change
   * notice per period so event streams drop them too.
   */
  async erase(
    periods: ReadonlyArray<{ board: Board; period: string; closed?: boolean }>,
    member: string,
  ): Promise<void> {
    // Retried later (the erasure job waits out an Unavailable): never recorded done with the member still here.
    if (!this.access.writes)
      throw new Unavailable('leaderboard Redis is in a key layout this release does not know', undefined, {
        dependency: 'leaderboard-redis',
        retryAfterSeconds: 5,
      });
    const notice = changedNotice(Date.now());
    const commands: KeyedCommand[] = periods.flatMap(({ board, period, closed }) => {
      const base = this.keys.period(board.id, period);
      // A closed period's keys would rank the others without the member, while its final
      // results keep their ranks (the member renamed): without `ok`, its reads use those.
      const final: KeyedCommand[] = closed
        ? [{ key: base, add: (pipeline: Pipeline) => pipeline.unlink(this.keys.ok(board.id, period)) }]
        : [];
      return [
        ...final,
        {
          key: base,
          add: (pipeline: Pipeline) =>
            (pipeline as ScriptPipeline).laurelErase(base, member, 'all', ...board.categories),
        },
        this.noticeCommand(board.id, period, notice),
      ];
    });
    for (const [err] of await execBySlot(this.redis, commands)) if (err) throw err;
  }

  /**
   * Commands adding event-to-visible lags to their (board, period, hour) histograms, one per
   * histogram, to ride in the projection's round trip. Kept LAG_TTL_SECONDS after the last
   * write: the rollups read the last three hours.
   */
  lagCommands(hourMs: number, lags: ReadonlyArray<{ board: string; period: string; ms: number }>): KeyedCommand[] {
    const byPeriod = new Map<string, number[]>();
    for (const { board, period, ms } of lags) {
      const key = this.keys.lag(board, period, hourMs);
      let list = byPeriod.get(key);
      if (!list) byPeriod.set(key, (list = []));
      list.push(ms);
    }
    return [...byPeriod.entries()].map(([key, list]) => {
      const counts = [...lagCounts(list).entries()].flat();
      return { key, add: (pipeline) => (pipeline as ScriptPipeline).laurelLagRecord(key, LAG_TTL_SECONDS, ...counts) };
    });
  }

  /** The lag histograms of the given hours, in one round trip (per slot on a cluster); null where none is kept. */
  async lagHistograms(
    hours: ReadonlyArray<{ board: string; period: string; hourMs: number }>,
  ): Promise<Array<Map<number, number> | null>> {
    const replies = await execBySlot(
      this.redis,
      hours.map(({ board, period, hourMs }) => {
        const key = this.keys.lag(board, period, hourMs);
        return { key, add: (pipeline) => pipeline.hgetall(key) };
      }),
    );
    return replies.map(([err, reply]) => {
      if (err) throw err;
      const fields = Object.entries(reply as Record<string, string>);
      return fields.length === 0 ? null : new Map(fields.map(([bucket, n]) => [Number(bucket), Number(n)]));
    });
  }

  private noticeCommand(board: string, period: string, notice: string): KeyedCommand {
    const channel = this.keys.changes(board, period);
    return { key: channel, add: (pipeline) => pipeline.spublish(channel, notice) };
  }

  /** Tells watching web processes that the period closed: its streams send their final state and end. */
  async notifyClosed(board: string, period: string): Promise<void> {
    await this.redis.spublish(this.keys.changes(board, period), closedNotice());
  }

  /** The closed notice of many periods, in one round trip (per slot on a cluster). */
  async notifyClosedMany(periods: ReadonlyArray<{ board: string; period: string }>): Promise<void> {
    const notice = closedNotice();
    await execBySlot(
      this.redis,
      periods.map((p) => {
        const channel = this.keys.changes(p.board, p.period);
        return { key: channel, add: (pipeline) => pipeline.spublish(channel, notice) };
      }),
    );
  }

  /**
   * What every stream of one scope in a web process needs, in one script call: the total,
   * the top `topN` entries and each given member's placement.
   */
  async watch(s: Scope, members: readonly string[], topN: number): Promise<Watched | Miss> {
    const [scope, state, ok, category] = this.readKeys(s);
    const reply = await this.redis.laurelWatch(scope, state, ok, category, sharedFlag(s.board), topN, ...members);
    if (reply[0] === 0) return miss(reply);
    const [, total, first, items, flat] = reply;
    const placed = new Map<string, Placed>();
    members.forEach((member, i) => {
      const rank0 = Number(flat[i * 3]);
      placed.set(
        member,
        rank0 < 0
          ? { total, rank: null, scaled: null }
          : {
              total,
              rank: rank0 + 1,
              scaled: scaledFromSortScore(s.board.order, String(flat[i * 3 + 1])),
              ...subscoreOf(s.board, String(flat[i * 3 + 2])),
            },
      );
    });
    return { total, top: rankedEntries(s.board, 0, first, items), placed };
  }

  /**
   * What the goals and cutoffs answers are made of, in one script call (one moment): the
   * member's placement and the entry just above it in the listing order, the entries at the
   * given positions and fractions of the total, and the given members' placements.
   */
  async targets(s: Scope, q: TargetQuery): Promise<Targets | Miss> {
    const [scope, state, ok, category] = this.readKeys(s);
    const reply = await this.redis.laurelTargets(
      scope,
      state,
      ok,
      category,
      sharedFlag(s.board),
      q.member ?? '',
      q.positions.length,
      ...q.positions,
      q.fractions.length,
      ...q.fractions.flatMap((f) => [f.numerator.toString(), f.denominator.toString()]),
      ...q.members,
    );
    if (reply[0] === 0) return miss(reply);
    const [, total, own, above, positions, fractions, placed] = reply;
    const entryAt = (flat: readonly unknown[], i: number) => targetEntry(s.board, flat, i);
    const placedAt = (flat: readonly unknown[], i: number): Placed => {
      const entry = entryAt(flat, i);
      return entry === null
        ? { total, rank: null, scaled: null }
        : {
            total,
            rank: entry.rank,
            scaled: entry.scaled,
            ...(entry.subscore === undefined ? {} : { subscore: entry.subscore }),
          };
    };
    return {
      total,
      own: q.member === null ? null : placedAt(own, 0),
      next: entryAt(above, 0),
      positions: q.positions.map((_, i) => positionEntry(s.board, positions, i * 2)),
      fractions: q.fractions.map((_, i) => ({
        position: Number(fractions[i * 3]),
        entry: positionEntry(s.board, fractions, i * 3 + 1),
      })),
      placed: new Map(q.members.map((member, i) => [member, placedAt(placed, i * 3)])),
    };
  }

  private readKeys(s: Scope): [string, string, string, string] {
    return [
      this.keys.scope(s.board.id, s.period, s.category, s.region),
      this.keys.state(s.board.id, s.period, s.category),
      this.keys.ok(s.board.id, s.period),
      s.category,
    ];
  }

  async slice(s: Scope, offset: number, limit: number): Promise<Slice | Miss> {
    return sliceFrom(
      await this.redis.laurelSlice(...this.readKeys(s), offset, limit, sharedFlag(s.board)),
      s.board,
      offset,
    );
  }

  /** The member and up to `radius` neighbours on each side; no entries when the member is unranked. */
  async around(s: Scope, member: string, radius: number): Promise<Slice | Miss> {
    const reply = await this.redis.laurelAround(...this.readKeys(s), member, radius, sharedFlag(s.board));
    if (reply[0] === 0) return miss(reply);
    const [, total, from, first, items] = reply;
    if (from === undefined || first === undefined || !items) return { total, entries: [] };
    return { total, entries: rankedEntries(s.board, from, first, items) };
  }

  /**
   * The entries of the given members that are ranked in the scope, in scope order: one
   * round trip (HMGET + ZMSCORE), O(k log N) for k members whatever their ranks.
   */
  async pick(s: Scope, members: readonly string[]): Promise<{ picked: PickedEntry[] } | Miss> {
    const reply = await this.redis.laurelPick(...this.readKeys(s), ...members);
    if (reply[0] === 0) return miss(reply);
    const flat = reply[1];
    const picked: PickedEntry[] = [];
    for (let i = 0; i < flat.length; i += 3) {
      const entry = flat[i + 1]!;
      picked.push({
        member: flat[i]!,
        entry,
        sortScore: Number(flat[i + 2]!),
        scaled: scaledFromSortScore(s.board.order, flat[i + 2]!),
        ...subscoreOf(s.board, entry),
      });
    }
    // Redis order: by score, then by entry bytes (entries are ASCII, so code units are bytes).
    return {
      picked: picked.sort((a, b) => a.sortScore - b.sortScore || (a.entry < b.entry ? -1 : a.entry > b.entry ? 1 : 0)),
    };
  }

  /**
   * A page and one member's placement, read together (MULTI: one round trip, one moment),
   * so `me` agrees with the entries beside it.
   */
  async sliceAndPlace(s: Scope, offset: number, limit: number, member: string): Promise<SliceAndPlace | Miss> {
    const keys = this.readKeys(s);
    const tx = this.redis.multi() as unknown as ScriptPipeline & {
      laurelSlice(...args: unknown[]): void;
      exec(): Promise<Reply[] | null>;
    };
    tx.laurelSlice(...keys, offset, limit, sharedFlag(s.board));
    tx.laurelPlace(...keys, member, sharedFlag(s.board));
    const replies = (await tx.exec()) ?? [];
    for (const [err] of replies) if (err) throw err;
    const slice = sliceFrom(replies[0]![1] as SliceReply, s.board, offset);
    const placed = placedFrom(replies[1]![1] as PlaceReply, s.board);
    if (isMiss(slice)) return slice;
    // Both ran in one transaction: the slice found the category complete, so did the place.
    return isMiss(placed) ? placed : { slice, placed };
  }

  /** One member's placement: one script call, no pipeline around it. */
  async place(s: Scope, member: string): Promise<Placed | Miss> {
    return placedFrom(await this.redis.laurelPlace(...this.readKeys(s), member, sharedFlag(s.board)), s.board);
  }

  /** Placements of many members, possibly on many boards, in one round trip (one per slot on a cluster). */
  async placeMany(queries: readonly MemberInScope[]): Promise<Array<Placed | Miss>> {
    if (queries.length === 0) return [];
    const replies = await execBySlot(
      this.redis,
      queries.map((q) => {
        const keys = this.readKeys(q);
        return {
          key: keys[0],
          add: (pipeline) => (pipeline as ScriptPipeline).laurelPlace(...keys, q.member, sharedFlag(q.board)),
        };
      }),
    );
    return replies.map(([err, reply], i) => {
      if (err) throw err;
      return placedFrom(reply as PlaceReply, queries[i]!.board);
    });
  }
}

type PlaceReply = Awaited<ReturnType<LeaderboardRedis['laurelPlace']>>;
type SliceReply = Awaited<ReturnType<LeaderboardRedis['laurelSlice']>>;

function sliceFrom(reply: SliceReply, board: Board, offset: number): Slice | Miss {
  if (reply[0] === 0) return miss(reply);
  const [, total, first, items] = reply;
  return { total, entries: rankedEntries(board, offset, first, items) };
}

function placedFrom(reply: PlaceReply, board: Board): Placed | Miss {
  if (reply[0] === 0) return miss(reply);
  const [, total, rank0, score, entry] = reply;
  if (rank0 === undefined || score === undefined) return { total, rank: null, scaled: null };
  return { total, rank: rank0 + 1, scaled: scaledFromSortScore(board.order, score), ...subscoreOf(board, entry ?? '') };
}

/** The (score, entry) pair at `i` of a targets reply as an entry; null past the end ('', ''). */
function positionEntry(board: Board, flat: readonly unknown[], i: number): PositionEntry | null {
  const entry = flat[i + 1];
  if (typeof entry !== 'string' || entry === '') return null;
  return {
    member: decodeEntry(board.tieBreak, entry, board.subscore),
    scaled: scaledFromSortScore(board.order, String(flat[i])),
    ...subscoreOf(board, entry),
  };
}

/** The (rank0, score, entry) triple at `i` of a targets reply as an entry; null where rank0 is -1. */
function targetEntry(board: Board, flat: readonly unknown[], i: number): SliceEntry | null {
  const rank0 = Number(flat[i]);
  const entry = flat.length <= i || rank0 < 0 ? null : positionEntry(board, flat, i + 1);
  return entry && { rank: rank0 + 1, ...entry };
}

/** The read scripts' shared flag: '0' distinct ranks, '1' equal scores share one, '2' equal scores and subscores. */
function sharedFlag(board: Board): string {
  if (board.tieBreak !== 'shared') return '0';
  return board.subscore ? '2' : '1';
}

/** `{ subscore }` read from an entry, on a board that has one. */
function subscoreOf(board: Board, entry: string): { subscore?: number } {
  const subscore = subscoreOfEntry(board.subscore, entry);
  return subscore === null ? {} : { subscore };
}

/**
 * Ranks of consecutive entries starting at index `offset`. With `shared`, the first entry's
 * rank comes from Redis (count of strictly better scores + 1) and equal scores share it.
 */
function rankedEntries(board: Board, offset: number, firstRank0: number, items: readonly string[]): SliceEntry[] {
  const entries: SliceEntry[] = [];
  let previousKey: string | undefined;
  for (let i = 0; i < items.length; i += 2) {
    const position = offset + i / 2;
    const entry = items[i]!;
    // What must be equal to share a rank: the score, and the subscore on a board with one.
    const key = `${items[i + 1]!}|${rankKeyOfEntry(board.subscore, entry)}`;
    let rank: number;
    if (board.tieBreak !== 'shared') rank = position + 1;
    else if (i === 0) rank = firstRank0 + 1;
    else rank = key === previousKey ? entries[entries.length - 1]!.rank : position + 1;
    previousKey = key;
    entries.push({
      rank,
      member: decodeEntry(board.tieBreak, entry, board.subscore),
      scaled: scaledFromSortScore(board.order, items[i + 1]!),
      ...subscoreOf(board, entry),
    });
  }
  return entries;
}

export interface PickedEntry {
  member: string;
  entry: string;
  sortScore: number;
  scaled: number;
  /** Scaled; on boards with a subscore only. */
  subscore?: number;
}

export interface SliceEntry {
  rank: number;
  member: string;
  scaled: number;
  /** Scaled; on boards with a subscore only. */
  subscore?: number;
}

export interface Slice {
  total: number;
  entries: SliceEntry[];
}

/** A page and one member's placement, read at one moment. */
export interface SliceAndPlace {
  slice: Slice;
  placed: Placed;
}

/** Given members' entries that are ranked in a scope, in scope order. */
export interface Picked {
  picked: PositionEntry[];
}

/**
 * An entry without its rank: at a position of the listing order the position is its place
 * (its shared rank, which would cost a count, is asked for by no answer); a pick has none.
 */
export type PositionEntry = Omit<SliceEntry, 'rank'>;

/** What a targets read asks for (goals and cutoffs). */
export interface TargetQuery {
  /** The member whose placement, and the entry just above it, are read; null for none. */
  member: string | null;
  /** 1-based positions of the listing order whose entries are read. */
  positions: readonly number[];
  /** Fractions of the total, each naming the position max(1, ceil(total × fraction)). */
  fractions: readonly Fraction[];
  /** Members whose placements are read. */
  members: readonly string[];
}

/** A targets read, at one moment. */
export interface Targets {
  total: number;
  /** The member's placement; null when no member was asked for. */
  own: Placed | null;
  /** The entry just above the member in the listing order; null at the top or while unranked. */
  next: SliceEntry | null;
  /** The entry at each asked position, null past the end. */
  positions: Array<PositionEntry | null>;
  /** Each fraction's position and the entry there, null past the end. */
  fractions: Array<{ position: number; entry: PositionEntry | null }>;
  placed: Map<string, Placed>;
}

export interface Watched {
  total: number;
  top: SliceEntry[];
  placed: Map<string, Placed>;
}
