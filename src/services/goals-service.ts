import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { unscale } from '../domain/decimal.js';
import { neededToPass, type Chaser, type GoalTarget } from '../domain/goals.js';
import { ALL_CATEGORIES, WORLD } from '../domain/ids.js';
import { zoneOf } from '../domain/league.js';
import type { Placed } from '../domain/ranking.js';
import { parseOrThrow } from '../domain/validation.js';
import type { Targets } from '../storage/redis/leaderboard-cache.js';
import { bucketOf, rankBucket, type LeagueBoard } from './league-service.js';
import { readerOf, type Source } from './standings/reader.js';
import { assertMember, resolveParsedScope, scopeQuerySchema, type ResolvedScope } from './standings-service.js';

export const goalsQuerySchema = scopeQuerySchema.omit({ metadata: true });

/** Followed members shown as goals: the nearest ten above the member. */
export const MAX_FOLLOWING_GOALS = 10;

/** An award of the scope and the listing position that reaches it. */
interface AwardTier {
  award: string;
  rank: number;
}

/**
 * The awards a scope grants at close: `top{N}` in a (category, world) scope, `region_top{N}`
 * in a region of the `all` category, none in a category's region (as the close grants them).
 */
function awardTiersOf(scope: ResolvedScope): AwardTier[] {
  const { awards } = scope.board;
  if (scope.region === WORLD) return awards.tiers.map((n) => ({ award: `top${n}`, rank: n }));
  if (scope.category === ALL_CATEGORIES) return awards.regionTiers.map((n) => ({ award: `region_top${n}`, rank: n }));
  return [];
}

/** A ranked member as a goal: where it is, and what it takes to pass it. */
interface Ranked extends GoalTarget {
  rank: number;
}

/**
 * GET /v1/boards/{id}/standings/{memberId}/goals: what the member needs to pass the entry
 * just above, the followed members above, each award tier not reached yet and the promotion
 * zone of their league bucket. One targets read (one Redis round trip) for all of it; the
 * follow list comes from the member directory and, on a league board, the bucket from Postgres.
 */
export async function memberGoals(ctx: AppContext, boardId: string, memberId: string, query: Record<string, unknown>) {
  const q = parseOrThrow(goalsQuerySchema, query, 'query');
  assertMember(memberId);
  const scope = await resolveParsedScope(ctx, boardId, q);
  const tiers = awardTiersOf(scope);
  const [followed, bucket] = await Promise.all([
    ctx.members.followedBy(memberId).then((ids) => ids.filter((id) => id !== memberId)),
    leagueBucket(ctx, scope, memberId),
  ]);
  const read: Targets & { source: Source } = scope.periodStored
    ? await readerOf(scope).targets(ctx, scope, {
        member: memberId,
        positions: tiers.map((t) => t.rank),
        fractions: [],
        members: [...new Set([...followed, ...(bucket?.members ?? [])])],
      })
    : { source: 'cache', ...NOTHING_RANKED };
  const own = read.own!;
  const chaser: Chaser = {
    member: memberId,
    ranked: own.rank !== null,
    ...(own.subscore === undefined ? {} : { subscore: own.subscore }),
  };
  const goal = (target: Ranked) => goalOf(scope.board, chaser, own, target);
  return {
    board: scope.board.id,
    period: scope.view,
    category: scope.category,
    region: scope.region,
    source: read.source,
    member: memberId,
    rank: own.rank,
    score: own.scaled === null ? null : unscale(own.scaled, scope.board.decimals),
    next: read.next === null ? null : goal(read.next),
    following: followedAbove(followed, read.placed, own).map(goal),
    awards: tiers.flatMap((tier, i) => {
      const target = read.positions[i];
      if (!target || (own.rank !== null && own.rank <= tier.rank)) return [];
      const { member: _member, ...toReach } = goal({ ...target, rank: tier.rank });
      return [{ award: tier.award, ...toReach }];
    }),
    league: bucket ? promotionGoal(scope.board as LeagueBoard, bucket, memberId, read.placed, goal) : null,
  };
}

/** A targets read of a period with no row yet: nothing is ranked in it. */
const NOTHING_RANKED: Targets = {
  total: 0,
  own: { total: 0, rank: null, scaled: null },
  next: null,
  positions: [],
  fractions: [],
  placed: new Map(),
};

/** `{ member, rank, score, needed, gap }` of a target; gap null while the member has no score. */
function goalOf(board: Board, chaser: Chaser, own: Placed, target: Ranked) {
  const needed = neededToPass(board, chaser, target);
  return {
    member: target.member,
    rank: target.rank,
    score: unscale(target.scaled, board.decimals),
    needed: unscale(needed, board.decimals),
    gap: own.scaled === null ? null : unscale(Math.abs(needed - own.scaled), board.decimals),
  };
}

/**
 * Followed members ranked above the member (a strictly better rank), nearest first; for a
 * member without a score, the ranked followed members, lowest ranked first. At most ten.
 */
function followedAbove(followed: readonly string[], placed: ReadonlyMap<string, Placed>, own: Placed): Ranked[] {
  const ranked = followed.flatMap((member) => {
    const p = placed.get(member);
    if (p?.rank == null || p.scaled === null) return [];
    return [{ member, rank: p.rank, scaled: p.scaled, ...(p.subscore === undefined ? {} : { subscore: p.subscore }) }];
  });
  // Listing order backwards: by rank, equal (shared) ranks by member id bytes, lowest first.
  ranked.sort((a, b) => b.rank - a.rank || (a.member < b.member ? 1 : a.member > b.member ? -1 : 0));
  const above = own.rank === null ? ranked : ranked.filter((r) => r.rank < own.rank!);
  return above.slice(0, MAX_FOLLOWING_GOALS);
}

/**
 * The member's league bucket, on a league board, in the scope the league ranks on
 * ((all, world)); null elsewhere and before the member's first event.
 */
async function leagueBucket(ctx: AppContext, scope: ResolvedScope, memberId: string) {
  if (!scope.board.league || scope.category !== ALL_CATEGORIES || scope.region !== WORLD) return null;
  return bucketOf(ctx, scope as ResolvedScope & { board: LeagueBoard }, memberId);
}

/** The lowest promoting place of the member's bucket as a goal, when the member is not in the zone. */
function promotionGoal(
  board: LeagueBoard,
  bucket: { tier: string; members: readonly string[] },
  memberId: string,
  placed: ReadonlyMap<string, Placed>,
  goal: (target: Ranked) => ReturnType<typeof goalOf>,
) {
  const { promote } = board.league;
  const ranked = rankBucket(bucket.members, placed);
  const lowest = ranked[promote - 1];
  if (!lowest || zoneOf(board.league, bucket.tier, promote, ranked.length) !== 'promote') return null;
  const place = ranked.findIndex((e) => e.member === memberId) + 1;
  if (place > 0 && place <= promote) return null;
  const { member: _member, ...toReach } = goal(lowest);
  return { zone: 'promote' as const, ...toReach };
}
