import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { ALL_CATEGORIES, WORLD } from '../domain/ids.js';
import { listBoards } from '../storage/postgres/boards-repository.js';
import { findPeriod, listOpenPeriods } from '../storage/postgres/periods-repository.js';
import { isRetired } from '../domain/retention.js';
import { scanMatching } from '../storage/redis/maintenance.js';
import { NotFound } from '../domain/errors.js';
import { aggregateRegions, streamScope } from '../storage/postgres/standings-repository.js';
import { cachedRegions } from '../storage/redis/scope-regions.js';
import { resultsPage } from '../storage/postgres/final-results-repository.js';
import { isMiss } from '../storage/redis/leaderboard-cache.js';

export interface Difference {
  board: string;
  period: string;
  category: string;
  region: string;
  problem: string;
}

const PAGE = 5000;
/** Enough to show any real divergence; a scope wholly different would otherwise print millions of lines. */
const MAX_DIFFERENCES = 100_000;

/** An open period's category that Redis does not hold whole: its reads come from Postgres and rebuild it. */
export interface MissingScope {
  board: string;
  period: string;
  category: string;
  region: string;
}

/**
 * Compares every scope of the chosen periods in Redis with Postgres, entry by entry
 * (rank, member, score) and in total. Open periods of every board by default; a closed
 * period named is compared with its final results, a retired one must hold no key. A scope
 * of an open period that Redis does not hold (not marked complete) is no difference: its
 * reads are answered from Postgres and ask for its rebuild. It is listed apart, in `missing`.
 */
export async function verifyLeaderboards(
  ctx: AppContext,
  options: { board?: string; period?: string } = {},
): Promise<{ scopes: number; differences: Difference[]; missing: MissingScope[] }> {
  const boards = options.board
    ? [await ctx.boards.get(options.board)].filter((b): b is Board => !!b)
    : await listBoards(ctx.db);
  if (options.board && boards.length === 0) throw new NotFound(`board "${options.board}" not found`);
  const differences: Difference[] = [];
  const missing: MissingScope[] = [];
  let scopes = 0;
  for (const board of boards) {
    const periods = options.period ? [options.period] : (await listOpenPeriods(ctx.db, board.id)).map((p) => p.key);
    for (const period of periods) {
      const stored = await findPeriod(ctx.db, board.id, period);
      if (stored && isRetired(stored, ctx.clock.now(), ctx.env.CLOSED_PERIOD_CACHE_HOURS)) {
        await checkNoKeysLeft(ctx, board, period, differences);
        continue;
      }
      const closed = stored?.state === 'closed';
      for (const category of [ALL_CATEGORIES, ...board.categories]) {
        for (const region of await regionsOf(ctx, board, period, category)) {
          scopes += 1;
          const held = await compareScope(ctx, board, { period, category, region }, closed, differences);
          if (!held && !closed) missing.push({ board: board.id, period, category, region });
          if (differences.length >= MAX_DIFFERENCES) return { scopes, differences, missing };
        }
      }
    }
  }
  return { scopes, differences, missing };
}

/**
 * A retired period (closed longer than CLOSED_PERIOD_CACHE_HOURS) is read from its final
 * results, so Redis must hold nothing of it: any key left is a difference (the period tick
 * removes them shortly after the retirement).
 */
async function checkNoKeysLeft(ctx: AppContext, board: Board, period: string, out: Difference[]): Promise<void> {
  const left = await scanMatching(ctx.leaderboard.redis, [`${ctx.leaderboard.keys.period(board.id, period)}:*`]);
  if (left.length > 0) {
    out.push({
      board: board.id,
      period,
      category: ALL_CATEGORIES,
      region: WORLD,
      problem: `retired closed period still holds ${left.length} Redis key(s)`,
    });
  }
}

/** A closed period's final results, page by page in position order (index-backed position ranges). */
async function* finalRows(ctx: AppContext, board: Board, scope: { period: string; category: string; region: string }) {
  for (let offset = 0; ; offset += PAGE) {
    const page = await resultsPage(ctx.db, { board, ...scope }, offset, PAGE);
    if (page.entries.length === 0) return;
    yield page.entries;
  }
}

/** World, plus every region either side knows for the category. */
async function regionsOf(ctx: AppContext, board: Board, period: string, category: string): Promise<string[]> {
  if (!board.regions) return [WORLD];
  const [stored, cached] = await Promise.all([
    aggregateRegions(ctx.db, { board: board.id, period, category }),
    cachedRegions(ctx.leaderboard, { board: board.id, period, category }),
  ]);
  return [WORLD, ...new Set([...stored, ...cached])].sort();
}

/**
 * An open period's scope against its aggregates; a closed one's against its final results,
 * which its reads answer when Redis lacks the scope (so a missing scope is no difference).
 * Returns whether Redis holds the scope.
 */
async function compareScope(
  ctx: AppContext,
  board: Board,
  scope: { period: string; category: string; region: string },
  closed: boolean,
  out: Difference[],
): Promise<boolean> {
  const where = { board: board.id, ...scope };
  const ref = { board, ...scope };
  const show = (e: { rank: number; member: string; scaled: number; subscore?: number } | undefined) =>
    e ? `#${e.rank} ${e.member} ${e.scaled}${e.subscore === undefined ? '' : `/${e.subscore}`}` : 'nothing';
  // One pass: Postgres streams the scope through a cursor, Redis is read page by page alongside.
  let position = 0;
  let pending: Array<{ rank: number; member: string; scaled: number; subscore?: number }> = [];
  let cacheTotal: number | null = null;
  const nextCachePage = async () => {
    const page = await ctx.leaderboard.slice(ref, position + pending.length, PAGE);
    if (isMiss(page)) return null;
    cacheTotal ??= page.total;
    return page.entries;
  };
  const compare = (d: (typeof pending)[number] | undefined, c: (typeof pending)[number] | undefined) => {
    position += 1;
    if (d?.member !== c?.member || d?.rank !== c?.rank || d?.scaled !== c?.scaled || d?.subscore !== c?.subscore) {
      out.push({ ...where, problem: `position ${position}: Postgres ${show(d)}, Redis ${show(c)}` });
    }
  };
  const first = await nextCachePage();
  if (first === null) return false;
  pending = first;
  let dbTotal = 0;
  for await (const rows of closed
    ? finalRows(ctx, board, scope)
    : streamScope(ctx.postgres.pool, ctx.db, { board, ...scope }, PAGE)) {
    dbTotal += rows.length;
    for (const d of rows) {
      if (pending.length === 0) pending = (await nextCachePage()) ?? [];
      compare(d, pending.shift());
      if (out.length >= MAX_DIFFERENCES) return true;
    }
  }
  // Whatever Redis has beyond the end of Postgres is extra.
  for (;;) {
    if (pending.length === 0) pending = (await nextCachePage()) ?? [];
    if (pending.length === 0) break;
    compare(undefined, pending.shift());
    if (out.length >= MAX_DIFFERENCES) return true;
  }
  if (cacheTotal !== dbTotal) out.push({ ...where, problem: `total: Postgres ${dbTotal}, Redis ${cacheTotal}` });
  return true;
}
