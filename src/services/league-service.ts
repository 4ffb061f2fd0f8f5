import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { Board, League } from '../domain/board.js';
import { NotFound } from '../domain/errors.js';
import { parseBucket, zoneOf } from '../domain/league.js';
import { parseOrThrow } from '../domain/validation.js';
import type { Placed } from '../domain/ranking.js';
import { listBoards } from '../storage/postgres/boards-repository.js';
import { bucketMembers, findPlacement, memberTiers } from '../storage/postgres/league-repository.js';
import { assertMemberId } from './member-id.js';
import { placesIn, resolveScope, withNames, type ResolvedScope } from './standings-service.js';

export const leagueQuerySchema = z.object({ period: z.string().max(32).default('current') });

export type LeagueBoard = Board & { league: League };

async function leagueScope(
  ctx: AppContext,
  boardId: string,
  query: Record<string, unknown>,
): Promise<ResolvedScope & { board: LeagueBoard }> {
  const q = parseOrThrow(leagueQuerySchema, query, 'query');
  const scope = await resolveScope(ctx, boardId, { period: q.period });
  if (!scope.board.league) throw new NotFound(`board "${boardId}" has no league`);
  return scope as ResolvedScope & { board: LeagueBoard };
}

/**
 * A bucket ranked with the board's tie rule: its members' (all, world) places, in that order
 * (equal shared ranks by member id), ranks counted within the bucket, each with its zone.
 */
async function bucketStandings(
  ctx: AppContext,
  scope: ResolvedScope & { board: LeagueBoard },
  tier: string,
  bucket: string,
) {
  const members = scope.periodStored ? await bucketMembers(ctx.db, scope.board.id, scope.period, bucket) : [];
  const placed: ReadonlyMap<string, Placed> =
    members.length > 0 ? (await placesIn(ctx, scope, members)).placed : new Map<string, Placed>();
  // A league's entries carry no subscore.
  const entries = rankBucket(members, placed).map(({ subscore: _subscore, ...e }) => e);
  const named = await withNames(ctx, scope.board, entries);
  const { league } = scope.board;
  return {
    board: scope.board.id,
    period: scope.view,
    tier,
    bucket,
    total: named.length,
    promote: league.promote,
    relegate: league.relegate,
    entries: named.map((e, i) => ({ ...e, zone: zoneOf(league, tier, i + 1, named.length) })),
  };
}

/** One entry of a bucket ranked within itself. */
export interface BucketEntry {
  member: string;
  rank: number;
  scaled: number;
  /** Scaled; on boards with a subscore only. */
  subscore?: number;
}

/**
 * A bucket's ranked members in the order of their scope places (equal shared ranks by member
 * id bytes), ranked within the bucket: shared scope ranks stay shared (competition
 * ranking), others count 1..n.
 */
export function rankBucket(members: readonly string[], placed: ReadonlyMap<string, Placed>): BucketEntry[] {
  const ranked = members
    .flatMap((member) => {
      const p = placed.get(member);
      return p?.rank != null && p.scaled !== null
        ? [
            {
              member,
              scopeRank: p.rank,
              scaled: p.scaled,
              ...(p.subscore === undefined ? {} : { subscore: p.subscore }),
            },
          ]
        : [];
    })
    .sort((a, b) => a.scopeRank - b.scopeRank || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
  const entries = ranked.map(({ scopeRank: _scopeRank, ...e }, i) => ({
    ...e,
    rank: i > 0 && ranked[i - 1]!.scopeRank === ranked[i]!.scopeRank ? 0 : i + 1,
  }));
  for (let i = 1; i < entries.length; i += 1) if (entries[i]!.rank === 0) entries[i]!.rank = entries[i - 1]!.rank;
  return entries;
}

/** The member's bucket in a period of a league board and its members; null before their first event. */
export async function bucketOf(
  ctx: AppContext,
  scope: ResolvedScope & { board: LeagueBoard },
  memberId: string,
): Promise<{ tier: string; bucket: string; members: string[] } | null> {
  if (!scope.periodStored) return null;
  const placement = await findPlacement(ctx.db, scope.board.id, scope.period, memberId);
  if (!placement) return null;
  return { ...placement, members: await bucketMembers(ctx.db, scope.board.id, scope.period, placement.bucket) };
}

/** GET /v1/boards/{id}/standings/{memberId}/league: the member's bucket, or their tier before they play. */
export async function memberLeague(ctx: AppContext, boardId: string, memberId: string, query: Record<string, unknown>) {
  assertMemberId(memberId);
  const scope = await leagueScope(ctx, boardId, query);
  const placement = scope.periodStored
    ? await findPlacement(ctx.db, scope.board.id, scope.period, memberId)
    : undefined;
  if (!placement) {
    const tier = (await memberTiers(ctx.db, memberId)).get(scope.board.id) ?? scope.board.league.startTier;
    const { league } = scope.board;
    return {
      board: scope.board.id,
      period: scope.view,
      tier,
      bucket: null,
      rank: null,
      total: 0,
      promote: league.promote,
      relegate: league.relegate,
      entries: [],
    };
  }
  const standings = await bucketStandings(ctx, scope, placement.tier, placement.bucket);
  return { ...standings, rank: standings.entries.find((e) => e.member === memberId)?.rank ?? null };
}

/** GET /v1/boards/{id}/league/{bucket}: one bucket's standings. */
export async function bucketLeague(ctx: AppContext, boardId: string, bucket: string, query: Record<string, unknown>) {
  const scope = await leagueScope(ctx, boardId, query);
  const tier = parseBucket(scope.board.league, bucket);
  if (!tier) throw new NotFound(`bucket "${bucket}" is not a bucket of board "${boardId}"`);
  return { ...(await bucketStandings(ctx, scope, tier, bucket)), rank: null };
}

/** GET /v1/members/{id}/leagues: per league board, the tier the member plays in next. */
export async function memberLeagues(ctx: AppContext, memberId: string) {
  assertMemberId(memberId);
  const [boards, tiers] = await Promise.all([listBoards(ctx.db), memberTiers(ctx.db, memberId)]);
  return {
    member: memberId,
    leagues: boards.flatMap((b) => (b.league ? [{ board: b.id, tier: tiers.get(b.id) ?? b.league.startTier }] : [])),
  };
}
