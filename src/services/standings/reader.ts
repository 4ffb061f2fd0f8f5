import type { AppContext } from '../../context.js';
import type { MemberInScope, Scope } from '../../domain/scope.js';
import type {
  Picked,
  Slice,
  SliceAndPlace,
  TargetQuery,
  Targets,
  Watched,
} from '../../storage/redis/leaderboard-cache.js';
import type { Placed } from '../../domain/ranking.js';
import type { PeriodView } from '../period-resolution.js';
import { closedPeriodReader } from './closed-period-reader.js';
import { openPeriodReader } from './open-period-reader.js';
import { retiredPeriodReader } from './retired-period-reader.js';

/** Where an answer came from: the leaderboard Redis, or Postgres (member aggregates or final results). */
export type Source = 'cache' | 'database';

export type Sourced<T> = T & { source: Source };

type Answer<T, Sourcing extends boolean> = Sourcing extends true ? Sourced<T> : T;

/**
 * Every read a standings answer is made of. A reader answers them whatever holds the
 * scope; the Postgres side of a reader answers the same reads without saying where from.
 */
export interface StandingsReads<Sourcing extends boolean> {
  /** A page in ranking order, with the scope's total. */
  slice(ctx: AppContext, s: Scope, offset: number, limit: number): Promise<Answer<Slice, Sourcing>>;
  /** A page and one member's placement, read at one moment so `me` agrees with the page. */
  sliceAndPlace(
    ctx: AppContext,
    s: Scope,
    offset: number,
    limit: number,
    member: string,
  ): Promise<Answer<SliceAndPlace, Sourcing>>;
  place(ctx: AppContext, s: Scope, member: string): Promise<Answer<Placed, Sourcing>>;
  /**
   * Placements in many scopes (possibly of many boards), in query order. `requestRebuilds:
   * false` asks for no rebuild of what Redis lacks, for a period that may not be created yet.
   */
  placeMany(
    ctx: AppContext,
    queries: readonly MemberInScope[],
    options?: { requestRebuilds?: boolean },
  ): Promise<Array<Answer<Placed, Sourcing>>>;
  /** The member and up to `radius` neighbours each side; no entries when the member is unranked. */
  around(ctx: AppContext, s: Scope, member: string, radius: number): Promise<Answer<Slice, Sourcing>>;
  /** The given members that are ranked in the scope, in scope order. */
  pick(ctx: AppContext, s: Scope, members: readonly string[]): Promise<Answer<Picked, Sourcing>>;
  /** What a process's streams of one scope need: the total, the top `topN` and each member's placement. */
  watch(ctx: AppContext, s: Scope, members: readonly string[], topN: number): Promise<Answer<Watched, Sourcing>>;
  /**
   * What goals and cutoffs are made of: a member's placement and the entry above it, the
   * entries at given positions and fractions of the total, and given members' placements.
   */
  targets(ctx: AppContext, s: Scope, q: TargetQuery): Promise<Answer<Targets, Sourcing>>;
}

export type StandingsReader = StandingsReads<true>;

/** The Postgres side of a reader: the truth, asked when the cache cannot answer. */
export type DatabaseReads = StandingsReads<false>;

/**
 * The reader of a period by its state: open (or closing) from the cache, else from member
 * aggregates; closed from the cache while it holds the scope, else from the final results;
 * retired (its Redis keys removed) from the final results only.
 */
export function readerOf(period: { view: PeriodView; retired: boolean }): StandingsReader {
  if (period.retired) return retiredPeriodReader;
  return period.view.state === 'closed' ? closedPeriodReader : openPeriodReader;
}
