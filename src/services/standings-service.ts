import { z } from 'zod';
import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { unscale } from '../domain/decimal.js';
import { ALL_CATEGORIES, MEMBER_ID, REGION_CODE, WORLD } from '../domain/ids.js';
import { placement } from '../domain/ranking.js';
import { MAX_FOLLOWING } from './following-service.js';
import { noPeriod, resolvePeriod, resolvePeriods, type PeriodView } from './period-resolution.js';
import { readerOf, type Source, type Sourced, type StandingsReader } from './standings/reader.js';
import type { Scope } from '../domain/scope.js';
import type { SliceEntry } from '../storage/redis/leaderboard-cache.js';
import type { Placed } from '../domain/ranking.js';
import { producingMetadata } from '../storage/postgres/entry-metadata-repository.js';
import { NotFound } from '../domain/errors.js';
import { parseOrThrow } from '../domain/validation.js';

export const scopeQuerySchema = z.object({
  period: z.string().max(32).default('current'),
  category: z.string().max(64).default(ALL_CATEGORIES),
  region: z.string().max(16).default(WORLD),
  metadata: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .meta({
      description: "every entry carries the metadata of the event that produced the member's current value, or null",
    }),
});

export const pageQuerySchema = scopeQuerySchema.extend({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
});

export const MAX_PICKED_MEMBERS = 100;

/** `a,b,c`: 1-100 member ids, each named by its index when at fault. */
const memberListSchema = z
  .string()
  .transform((text) => text.split(','))
  .pipe(
    z
      .array(z.string().regex(MEMBER_ID, 'not a valid member id'))
      .min(1)
      .max(MAX_PICKED_MEMBERS, `at most ${MAX_PICKED_MEMBERS} member ids`),
  );

export const standingsQuerySchema = pageQuerySchema.extend({
  members: memberListSchema.optional().meta({
    description:
      'comma-separated member ids (1-100): only their entries, with their ranks in the scope; offset and limit do not apply',
  }),
  member: z
    .string()
    .regex(MEMBER_ID, 'not a valid member id')
    .optional()
    .meta({ description: "adds `me`: this member's rank, score and percentile" }),
});

/** A scope as a request names it, with what its period is now. */
export interface ResolvedScope extends Scope {
  view: PeriodView;
  /** False when the period has no row yet: nothing can be ranked in it. */
  periodStored: boolean;
  /** Closed longer than the cache retention: answered from its final results only. */
  retired: boolean;
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
export async function resolveScope(ctx: AppContext, boardId: string, query: unknown): Promise<ResolvedScope> {
  return resolveParsedScope(ctx, boardId, parseOrThrow(scopeQuerySchema, query, 'query'));
}

/** resolveScope for a query already parsed by a schema that extends scopeQuerySchema. */
export async function resolveParsedScope(
  ctx: AppContext,
  boardId: string,
  q: Pick<z.infer<typeof scopeQuerySchema>, 'period' | 'category' | 'region'>,
): Promise<ResolvedScope> {
  const board = await ctx.boards.get(boardId);
  if (!board) throw new NotFound(`board "${boardId}" not found`);
  const period = await resolvePeriod(ctx, board, q.period);
  if (!period) throw noPeriod(board, q.period);
  if (q.category !== ALL_CATEGORIES && !board.categories.includes(q.category)) {
    throw new NotFound(`category "${q.category}" not found on board "${boardId}"`);
  }
  if (q.region !== WORLD && (!board.regions || !REGION_CODE.test(q.region))) {
    throw new NotFound(
      board.regions ? `region "${q.region}" is not a valid region code` : `board "${boardId}" does not rank by region`,
    );
  }
  return {
    board,
    period: period.view.key,
    view: period.view,
    periodStored: period.stored,
    retired: period.retired,
    category: q.category,
    region: q.region,
  };
}

/** Given members' places in a resolved scope, in one read; league buckets rank on it. */
export function placesIn(ctx: AppContext, scope: ResolvedScope, members: readonly string[]) {
  return readerOf(scope).watch(ctx, scope, members, 0);
}

export function header(scope: ResolvedScope, total: number, source: Source): ScopeHeader {
  return { board: scope.board.id, period: scope.view, category: scope.category, region: scope.region, total, source };
}

export interface StandingEntry {
  rank: number;
  member: string;
  displayName: string | null;
  score: number;
  subscore?: number;
  metadata?: unknown;
}

/**
 * With `?metadata=true`, each entry with the metadata of the event behind its value, or
 * null. Not in Redis (metadata is up to 2 KB per event): one Postgres statement per answer.
 */
export async function withMetadata(
  ctx: AppContext,
  scope: Scope,
  wanted: boolean,
  entries: StandingEntry[],
): Promise<StandingEntry[]> {
  if (!wanted) return entries;
  const found = await producingMetadata(
    ctx.db,
    { board: scope.board.id, period: scope.period, category: scope.category },
    entries.map((e) => e.member),
  );
  return entries.map((e) => ({ ...e, metadata: found.get(e.member) ?? null }));
}

export type MemberPlacement = ReturnType<typeof placementOf>;

/**
 * A page of the scope; with `members`, only those members' entries at their scope ranks
 * instead; with `member`, also `me`. Each is one Redis round trip (a page with `me` is one
 * transaction), or one fallback slot when Redis lacks the scope.
 */
export async function standingsPage(
  ctx: AppContext,
  boardId: string,
  query: Record<string, unknown>,
): Promise<ScopeHeader & { limit: number; offset: number; entries: StandingEntry[]; me?: MemberPlacement }> {
  const q = parseOrThrow(standingsQuerySchema, query, 'query');
  const scope = await resolveParsedScope(ctx, boardId, q);
  const reader = readerOf(scope);
  const empty: Placed = { total: 0, rank: null, scaled: null };
  let read: { source: Source; total: number; entries: SliceEntry[]; me: Placed | null };
  if (!scope.periodStored) {
    read = { source: 'cache', total: 0, entries: [], me: q.member === undefined ? null : empty };
  } else if (q.members) {
    const asked = [...new Set(q.members)];
    const { source, total, placed } = await reader.watch(
      ctx,
      scope,
      q.member === undefined ? asked : [...asked, q.member],
      0,
    );
    const entries = asked.flatMap((member) => {
      const p = placed.get(member);
      return p?.rank != null && p.scaled !== null
        ? [{ rank: p.rank, member, scaled: p.scaled, subscore: p.subscore }]
        : [];
    });
    // Scope order: by rank, equal (shared) ranks by member id bytes (ids are ASCII).
    entries.sort((a, b) => a.rank - b.rank || (a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
    read = {
      source,
      total,
      entries,
      me: q.member === undefined ? null : (placed.get(q.member) ?? { ...empty, total }),
    };
  } else if (q.member !== undefined) {
    const { source, slice, placed } = await reader.sliceAndPlace(ctx, scope, q.offset, q.limit, q.member);
    read = { source, total: slice.total, entries: slice.entries, me: placed };
  } else {
    const { source, total, entries } = await reader.slice(ctx, scope, q.offset, q.limit);
    read = { source, total, entries, me: null };
  }
  return {
    ...header(scope, read.total, read.source),
    limit: q.limit,
    offset: q.offset,
    entries: await withMetadata(ctx, scope, q.metadata, await withNames(ctx, scope.board, read.entries)),
    ...(q.member === undefined || read.me === null ? {} : { me: placementOf(scope.board, q.member, read.me) }),
  };
}

export function assertMember(memberId: string): void {
  if (!MEMBER_ID.test(memberId)) throw new NotFound(`member "${memberId}" is not a valid member id`);
}

export async function withNames<
  T extends { member: string; scaled: number; rank: number; subscore?: number | undefined },
>(ctx: AppContext, board: Board, entries: readonly T[]): Promise<StandingEntry[]> {
  const names = await ctx.members.displayNames(entries.map((e) => e.member));
  return entries.map((e) => ({
    rank: e.rank,
    member: e.member,
    displayName: names.get(e.member) ?? null,
    score: unscale(e.scaled, board.decimals),
    ...entrySubscore(board, e.subscore),
  }));
}

/** `{ subscore }` of an entry as clients see it, on a board that has one (docs/design/projection.md). */
export function entrySubscore(board: Board, scaled: number | undefined): { subscore?: number } {
  return board.subscore && scaled !== undefined ? { subscore: unscale(scaled, board.decimals) } : {};
}

export const aroundQuerySchema = scopeQuerySchema.extend({ radius: z.coerce.number().int().min(0).max(50).default(5) });

export async function aroundMember(ctx: AppContext, boardId: string, memberId: string, query: Record<string, unknown>) {
  const q = parseOrThrow(aroundQuerySchema, query, 'query');
  const { radius } = q;
  assertMember(memberId);
  const scope = await resolveParsedScope(ctx, boardId, q);
  const slice = scope.periodStored
    ? await readerOf(scope).around(ctx, scope, memberId, radius)
    : { source: 'cache' as const, total: 0, entries: [] };
  const own = slice.entries.find((e) => e.member === memberId);
  return {
    ...header(scope, slice.total, slice.source),
    member: memberId,
    rank: own?.rank ?? null,
    radius,
    entries: await withMetadata(ctx, scope, q.metadata, await withNames(ctx, scope.board, slice.entries)),
  };
}

export const followingQuerySchema = scopeQuerySchema.extend({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_FOLLOWING + 1)
    .default(50),
});

/**
 * The member ranked among themselves and those they follow: exact rank and total for any
 * list size, read member by member from the scope (never filtered from a top slice).
 */
export async function followingStandings(
  ctx: AppContext,
  boardId: string,
  memberId: string,
  query: Record<string, unknown>,
) {
  const q = parseOrThrow(followingQuerySchema, query, 'query');
  const { limit } = q;
  assertMember(memberId);
  const scope = await resolveParsedScope(ctx, boardId, q);
  const group = [memberId, ...(await ctx.members.followedBy(memberId))];
  const { source, picked } = scope.periodStored
    ? await readerOf(scope).pick(ctx, scope, group)
    : { source: 'cache' as const, picked: [] };
  const ranked = picked.map((p, i) => ({ ...p, rank: i + 1 }));
  if (scope.board.tieBreak === 'shared') {
    ranked.forEach((p, i) => {
      const before = ranked[i - 1];
      if (before && p.scaled === before.scaled && p.subscore === before.subscore) p.rank = before.rank;
    });
  }
  const own = ranked.find((p) => p.member === memberId);
  return {
    ...header(scope, ranked.length, source),
    member: memberId,
    rank: own?.rank ?? null,
    following: group.length - 1,
    entries: await withMetadata(ctx, scope, q.metadata, await withNames(ctx, scope.board, ranked.slice(0, limit))),
  };
}

export async function memberStanding(
  ctx: AppContext,
  boardId: string,
  memberId: string,
  query: Record<string, unknown>,
) {
  assertMember(memberId);
  const scope = await resolveScope(ctx, boardId, query);
  const placed = scope.periodStored
    ? await readerOf(scope).place(ctx, scope, memberId)
    : { source: 'cache' as const, total: 0, rank: null, scaled: null };
  return memberStandingBody(scope, memberId, placed.source, placed);
}

/** The member standing route's body, also the payload of its stream's `standing` events. */
export function memberStandingBody(scope: ResolvedScope, memberId: string, source: Source, placed: Placed) {
  return { ...header(scope, placed.total, source), ...placementOf(scope.board, memberId, placed) };
}

/** `{ member, rank, score, percentile, topPercent }`, all null but the member without a score. */
export function placementOf(board: Board, memberId: string, placed: Placed) {
  if (placed.rank === null || placed.scaled === null) {
    return { member: memberId, rank: null, score: null, percentile: null, topPercent: null };
  }
  const { rank, percentile, topPercent } = placement(placed.rank, placed.total);
  return { member: memberId, rank, score: unscale(placed.scaled, board.decimals), percentile, topPercent };
}

export const memberBoardsQuerySchema = z.object({ period: z.string().max(32).default('current') });

/**
 * The member's (all, world) placement on every board: one Redis pipeline for all
 * placements, whatever the number of boards; the boards and their periods come from the
 * per-process caches (Postgres at most once per cache lifetime, never per request).
 */
export async function memberAcrossBoards(ctx: AppContext, memberId: string, query: Record<string, unknown>) {
  const { period } = parseOrThrow(memberBoardsQuerySchema, query, 'query');
  assertMember(memberId);
  const boards = await ctx.boards.list();
  const resolved = await resolvePeriods(ctx, boards, period);
  // One placeMany per reader (one pipeline and at most one Postgres call each), all at once.
  const byReader = new Map<StandingsReader, typeof resolved>();
  for (const r of resolved) {
    if (!r.stored) continue;
    const reader = readerOf(r);
    byReader.set(reader, [...(byReader.get(reader) ?? []), r]);
  }
  const byBoard = new Map<string, Sourced<Placed>>();
  await Promise.all(
    [...byReader].map(async ([reader, periods]) => {
      const placed = await reader.placeMany(
        ctx,
        periods.map((r) => ({
          board: r.board,
          period: r.view.key,
          category: ALL_CATEGORIES,
          region: WORLD,
          member: memberId,
        })),
      );
      periods.forEach((r, i) => byBoard.set(r.board.id, placed[i]!));
    }),
  );
  return {
    member: memberId,
    standings: resolved.map(({ board, view }) => {
      const placed = byBoard.get(board.id) ?? { source: 'cache' as const, total: 0, rank: null, scaled: null };
      const { member: _member, ...placedBody } = placementOf(board, memberId, placed);
      return { board: board.id, period: view, total: placed.total, source: placed.source, ...placedBody };
    }),
  };
}
