import type { Board } from '../../domain/board.js';
import { entryOfAggregate, sortScore } from '../../domain/ranking.js';
import type { AggregateState } from '../postgres/events-repository.js';
import type { LeaderboardCache } from './leaderboard-cache.js';
import type { RedisClient } from './connections.js';
import { stateBuckets } from './member-state.js';

/** Temp keys of a rebuild that died mid-way expire after this. */
const TEMP_TTL_SECONDS = 3600;
/** Live writes replayed per call before the swap: bounded, so reads never wait long behind one. */
const REPLAY_STEP = 500;

/**
 * The Redis side of one category's rebuild: a token registered first (from then on every
 * live projection of the category also reaches the rebuild, waiting to be replayed), pages of
 * aggregates written into the temp keys in member order, the waiting live writes replayed,
 * and one atomic swap of temp for live. A newer rebuild's token
 * makes this one stand down (`superseded`).
 */
export class ScopeRebuildWriter {
  private readonly base: string;
  /** Member ids are ASCII (MEMBER_ID), so JavaScript's string order is their byte order. */
  private lastMember = '';

  constructor(
    private readonly cache: LeaderboardCache,
    private readonly board: Board,
    period: string,
    private readonly category: string,
    private readonly token: string,
  ) {
    this.base = cache.keys.period(board.id, period);
  }

  async begin(): Promise<void> {
    await this.cache.redis.laurelRebuildBegin(this.base, this.category, this.token, TEMP_TTL_SECONDS);
  }

  /**
   * Writes one page; false when a newer rebuild took over. Pages come in ascending member-id
   * byte order (the page query's C collation), which the fill's buckets rely on: checked here.
   */
  async fill(page: readonly AggregateState[]): Promise<boolean> {
    const after = this.lastMember;
    const args: string[] = [];
    for (const a of page) {
      if (!(a.member > this.lastMember))
        throw new Error(`rebuild pages out of member order: ${a.member} after ${this.lastMember}`);
      this.lastMember = a.member;
      const entry = a.hidden ? '' : entryOfAggregate(this.board, a);
      args.push(a.member, String(a.version), sortScore(this.board.order, BigInt(a.value)), entry, a.region ?? '');
    }
    if (
      (await this.cache.redis.laurelRebuildFill(
        this.base,
        this.category,
        this.token,
        TEMP_TTL_SECONDS,
        after,
        ...args,
      )) !== 0
    )
      return true;
    await this.discard();
    return false;
  }

  /**
   * Gives up without swapping (the period retired meanwhile): unregisters the category's
   * rebuild so no swap and no live projection uses it, and removes its temp keys.
   */
  async abandon(): Promise<void> {
    await this.cache.redis.hdel(`${this.base}:rb`, this.category);
    await this.discard();
  }

  /** This rebuild's temp keys, once nothing will swap them in (superseded, expired, abandoned). */
  private async discard(): Promise<void> {
    await unlinkRebuildTemp(this.cache.redis, this.base, this.category, this.token);
  }

  /**
   * Replays the live writes that arrived during the fill, REPLAY_STEP members per call, until
   * few are left, then swaps temp for live (replaying those few) and marks the category
   * complete.
   */
  async swap(): Promise<'swapped' | 'superseded' | 'expired'> {
    let outcome: 'swapped' | 'superseded' | 'expired' | undefined;
    while (!outcome) {
      const left = await this.cache.redis.laurelRebuildReplay(this.base, this.category, this.token, REPLAY_STEP);
      if (left === -1) outcome = 'superseded';
      else if (left === -2) outcome = 'expired';
      else if (left <= REPLAY_STEP) {
        const swapped = await this.cache.redis.laurelRebuildSwap(this.base, this.category, this.token);
        outcome = swapped === 0 ? 'superseded' : swapped === -1 ? 'expired' : 'swapped';
      }
    }
    if (outcome !== 'swapped') await this.discard();
    return outcome;
  }
}

/**
 * Removes a rebuild's temp keys in bounded steps: its state buckets (named by its index),
 * then the rest. They share the period's hash tag, so each UNLINK stays in one cluster slot.
 */
export async function unlinkRebuildTemp(
  redis: RedisClient,
  base: string,
  category: string,
  token: string,
): Promise<void> {
  const fam = `${base}:t:${token}`;
  const index = `${fam}:st:${category}`;
  for await (const buckets of stateBuckets(redis, index)) await redis.unlink(...buckets);
  const regions = await redis.smembers(`${fam}:rg:${category}`);
  const rest = [
    `${fam}:z:${category}:world`,
    `${fam}:pd:${category}`,
    `${fam}:fl:${category}`,
    `${fam}:alive`,
    index,
    `${fam}:rg:${category}`,
  ];
  await redis.unlink(...regions.map((region) => `${fam}:z:${category}:${region}`), ...rest);
}
