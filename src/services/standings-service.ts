import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { unscale } from '../domain/decimal.js';
import { ALL_CATEGORIES, MEMBER_ID, REGION_CODE, WORLD } from '../domain/ids.js';
import { placement } from '../domain/ranking.js';
import { MAX_FOLLOWING } from './following-service.js';
import { resolvePeriod, resolvePeriods, type PeriodView } from './period-resolution.js';
import { readAround, readPick, readPlace, readPlaceMany, readSlice, type Source } from './standings-source.js';
import { finalAround, finalPick, finalPlace, finalPlaceMany, finalSlice } from './final-standings-source.js';
import type { Placed, ScopeRef } from '../storage/redis/leaderboard-cache.js';
import { listBoards } from '../storage/postgres/boards-repository.js';
import { NotFound } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';

export const scopeQuerySchema = z.object({
  period: z.string().max(32).default('current'),
  category: z.string().max(64).default(ALL_CATEGORIES),
  region: z.string().max(16).default(WORLD),
});

export const pageQuerySchema = scopeQuerySchema.extend({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
});

export interface Scope {
  board: Board;
  period: PeriodView;
  /** False when the period has no row yet: nothing can be ranked in it. */
  periodStored: boolean;
  /** Closed longer than the cache retention: answered from its final results (final-standings-source). */
  retired: boolean;
  category: string;
  region: string;
}

export interface ScopeHeader {
  board: string;
  period: PeriodView;
  category: string;
  region: string;
  total: number;
  source: 'cache' | 'database';
}

/** Resolves board, period, category and region, answering 404 for whichever is unknown. */
export async function resolveScope(ctx: AppContext, boardId: string, query: unknown): Promise<Scope> {
  return resolveParsedScope(ctx, boardId, parseOrThrow(scopeQuerySchema, query, 'query'));
}

/** resolveScope for a query already parsed by a schema that extends scopeQuerySchema. */
async function resolveParsedScope(ctx: AppContext, boardId: string, q: z.infer<typeof scopeQuerySchema>): Promise<Scope> {
  const board = await ctx.boards.get(boardId);
  if (!board) throw new NotFound(`board "${boardId}" not found`);
  const period = await resolvePeriod(ctx, board, q.period);
  if (!period) throw new NotFound(`period "${q.period}" not found on board "${boardId}"`);
  if (q.category !== ALL_CATEGORIES && !board.categories.includes(q.category)) {
    throw new NotFound(`category "${q.category}" not found on board "${boardId}"`);
  }
  if (q.region !== WORLD && (!board.regions || !REGION_CODE.test(q.region))) {
    throw new NotFound(
      board.regions ? `region "${q.region}" is not a valid region code` : `board "${boardId}" does not rank by region`,
    );
  }
  return { board, period: period.view, periodStored: period.stored, retired: period.retired, category: q.category, region: q.region };
}

const liveReads = { slice: readSlice, place: readPlace, around: readAround, pick: readPick };
const finalReads = { slice: finalSlice, place: finalPlace, around: finalAround, pick: finalPick };

/** Where a scope's standings are read: the cache (with its Postgres fallback), or a retired period's final results. */
function readsOf(scope: Scope) {
  return scope.retired ? finalReads : liveReads;
}

export function header(scope: Scope, total: number, source: Source): ScopeHeader {
  return { board: scope.board.id, period: scope.period, category: scope.category, region: scope.region, total, source };
}

export function ref(scope: Scope): ScopeRef {
  return { board: scope.board, period: scope.period.key, category: scope.category, region: scope.region };
}

export interface StandingEntry {
  rank: number;
  member: string;
  displayName: string | null;
  score: number;
}

export async function standingsPage(
  ctx: AppContext,
  boardId: string,
  query: Record<string, unknown>,
): Promise<ScopeHeader & { limit: number; offset: number; entries: StandingEntry[] }> {
  const page = parseOrThrow(pageQuerySchema, query, 'query');
  const scope = await resolveParsedScope(ctx, boardId, page);
  const slice = scope.periodStored
    ? await readsOf(scope).slice(ctx, ref(scope), page.offset, page.limit)
    : { source: 'cache' as const, total: 0, entries: [] };
  return {
    ...header(scope, slice.total, slice.source),
    limit: page.limit,
    offset: page.offset,
    entries: await withNames(ctx, scope.board, slice.entries),
  };
}

export function assertMember(memberId: string): void {
  if (!MEMBER_ID.test(memberId)) throw new NotFound(`member "${memberId}" is not a valid member id`);
}

export async function withNames<T extends { member: string; scaled: number; rank: number }>(
  ctx: AppContext,
  board: Board,
  entries: readonly T[],
): Promise<StandingEntry[]> {
  const names = await ctx.members.displayNames(entries.map((e) => e.member));
  return entries.map((e) => ({
    rank: e.rank,
    member: e.member,
    displayName: names.get(e.member) ?? null,
    score: unscale(e.scaled, board.decimals),
  }));
}

export const aroundQuerySchema = scopeQuerySchema.extend({ radius: z.coerce.number().int().min(0).max(50).default(5) });

export async function aroundMember(ctx: AppContext, boardId: string, memberId: string, query: Record<string, unknown>) {
  const q = parseOrThrow(aroundQuerySchema, query, 'query');
  const { radius } = q;
  assertMember(memberId);
  const scope = await resolveParsedScope(ctx, boardId, q);
  const slice = scope.periodStored
    ? await readsOf(scope).around(ctx, ref(scope), memberId, radius)
    : { source: 'cache' as const, total: 0, entries: [] };
  const own = slice.entries.find((e) => e.member === memberId);
  return {
    ...header(scope, slice.total, slice.source),
    member: memberId,
    rank: own?.rank ?? null,
    radius,
    entries: await withNames(ctx, scope.board, slice.entries),
  };
}

export const followingQuerySchema = scopeQuerySchema.extend({ limit: z.coerce.number().int().min(1).max(MAX_FOLLOWING + 1).default(50) });

/**
 * The member ranked among themselves and those they follow: exact rank and total for any
 * list size, read member by member from the scope (never filtered from a top slice).
 */
export async function followingStandings(ctx: AppContext, boardId: string, memberId: string, query: Record<string, unknown>) {
  const q = parseOrThrow(followingQuerySchema, query, 'query');
  const { limit } = q;
  assertMember(memberId);
  const scope = await resolveParsedScope(ctx, boardId, q);
  const group = [memberId, ...(await ctx.members.followedBy(memberId))];
  const { source, picked } = scope.periodStored
    ? await readsOf(scope).pick(ctx, ref(scope), group)
    : { source: 'cache' as const, picked: [] };
  const ranked = picked.map((p, i) => ({ ...p, rank: i + 1 }));
  if (scope.board.tieBreak === 'shared') {
    ranked.forEach((p, i) => {
      if (i > 0 && p.scaled === ranked[i - 1]!.scaled) p.rank = ranked[i - 1]!.rank;
    });
  }
  const own = ranked.find((p) => p.member === memberId);
  return {
    ...header(scope, ranked.length, source),
    member: memberId,
    rank: own?.rank ?? null,
    following: group.length - 1,
    entries: await withNames(ctx, scope.board, ranked.slice(0, limit)),
  };
}

export async function memberStanding(ctx: AppContext, boardId: string, memberId: string, query: Record<string, unknown>) {
  assertMember(memberId);
  const scope = await resolveScope(ctx, boardId, query);
  const { source, placed } = scope.periodStored
    ? await readsOf(scope).place(ctx, ref(scope), memberId)
    : { source: 'cache' as const, placed: { total: 0, rank: null, scaled: null } };
  return memberStandingBody(scope, memberId, source, placed);
}

/** The member standing route's body, also the payload of its stream's `standing` events. */
export function memberStandingBody(scope: Scope, memberId: string, source: Source, placed: Placed) {
  const base = { ...header(scope, placed.total, source), member: memberId };
  if (placed.rank === null || placed.scaled === null) {
    return { ...base, rank: null, score: null, percentile: null, topPercent: null };
  }
  const { rank, percentile, topPercent } = placement(placed.rank, placed.total);
  return { ...base, rank, score: unscale(placed.scaled, scope.board.decimals), percentile, topPercent };
}

export const memberBoardsQuerySchema = z.object({ period: z.string().max(32).default('current') });

/**
 * The member's (all, world) placement on every board: one Postgres query for the periods
 * and one Redis pipeline for all placements, whatever the number of boards.
 */
export async function memberAcrossBoards(ctx: AppContext, memberId: string, query: Record<string, unknown>) {
  const { period } = parseOrThrow(memberBoardsQuerySchema, query, 'query');
  assertMember(memberId);
  const boards = await listBoards(ctx.db);
  const resolved = await resolvePeriods(ctx, boards, period);
  const placeQuery = (r: (typeof resolved)[number]) => ({ board: r.board, period: r.view.key, category: ALL_CATEGORIES, region: WORLD, member: memberId });
  const live = resolved.filter((r) => r.stored && !r.retired);
  const retired = resolved.filter((r) => r.retired);
  const [livePlacements, finalPlacements] = await Promise.all([
    readPlaceMany(ctx, live.map(placeQuery)),
    finalPlaceMany(ctx, retired.map(placeQuery)),
  ]);
  const byBoard = new Map([
    ...live.map((r, i) => [r.board.id, livePlacements[i]!] as const),
    ...retired.map((r, i) => [r.board.id, finalPlacements[i]!] as const),
  ]);
  return {
    member: memberId,
    standings: resolved.map(({ board, view }) => {
      const found = byBoard.get(board.id);
      const placed = found?.placed;
      const base = { board: board.id, period: view, total: placed?.total ?? 0, source: found?.source ?? 'cache' };
      if (!placed || placed.rank === null || placed.scaled === null) {
        return { ...base, rank: null, score: null, percentile: null, topPercent: null };
      }
      const { rank, percentile, topPercent } = placement(placed.rank, placed.total);
      return { ...base, rank, score: unscale(placed.scaled, board.decimals), percentile, topPercent };
    }),
  };
}
