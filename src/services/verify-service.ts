import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { ALL_CATEGORIES, WORLD } from '../domain/ids.js';
import { listBoards } from '../storage/postgres/boards-repository.js';
import { listOpenPeriods } from '../storage/postgres/periods-repository.js';
import { rankScope } from '../storage/postgres/standings-repository.js';
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

/**
 * Compares every scope of the chosen periods in Redis with Postgres, entry by entry
 * (rank, member, score) and in total. Open periods of every board by default.
 */
export async function verifyLeaderboards(
  ctx: AppContext,
  options: { board?: string; period?: string } = {},
): Promise<{ scopes: number; differences: Difference[] }> {
  const boards = options.board ? [await ctx.boards.get(options.board)].filter((b): b is Board => !!b) : await listBoards(ctx.db);
  if (options.board && boards.length === 0) throw new Error(`board "${options.board}" not found`);
  const differences: Difference[] = [];
  let scopes = 0;
  for (const board of boards) {
    const periods = options.period ? [options.period] : (await listOpenPeriods(ctx.db, board.id)).map((p) => p.key);
    for (const period of periods) {
      for (const category of [ALL_CATEGORIES, ...board.categories]) {
        for (const region of await regionsOf(ctx, board, period, category)) {
          scopes += 1;
          await compareScope(ctx, board, { period, category, region }, differences);
          if (differences.length >= MAX_DIFFERENCES) return { scopes, differences };
        }
      }
    }
  }
  return { scopes, differences };
}

/** World, plus every region either side knows for the category. */
async function regionsOf(ctx: AppContext, board: Board, period: string, category: string): Promise<string[]> {
  if (!board.regions) return [WORLD];
  const { rows } = await sql<{ region: string }>`
    SELECT DISTINCT region FROM member_aggregates
     WHERE board_id = ${board.id} AND period_key = ${period} AND category = ${category} AND region IS NOT NULL`.execute(ctx.db);
  const cached = await ctx.leaderboard.redis.smembers(`${ctx.leaderboard.keys.period(board.id, period)}:rg:${category}`);
  return [WORLD, ...new Set([...rows.map((r) => r.region), ...cached])].sort();
}

async function compareScope(
  ctx: AppContext,
  board: Board,
  scope: { period: string; category: string; region: string },
  out: Difference[],
): Promise<void> {
  const where = { board: board.id, ...scope };
  const ref = { board, ...scope };
  for (let offset = 0; ; offset += PAGE) {
    const [db, cache] = await Promise.all([
      rankScope(ctx.db, board, scope, { offset, limit: PAGE }),
      ctx.leaderboard.slice(ref, offset, PAGE),
    ]);
    if (isMiss(cache)) {
      out.push({ ...where, problem: 'missing from Redis (category not complete)' });
      return;
    }
    if (offset === 0 && db.total !== cache.total) out.push({ ...where, problem: `total: Postgres ${db.total}, Redis ${cache.total}` });
    const n = Math.max(db.entries.length, cache.entries.length);
    for (let i = 0; i < n; i += 1) {
      const d = db.entries[i];
      const c = cache.entries[i];
      if (d?.member !== c?.member || d?.rank !== c?.rank || d?.scaled !== c?.scaled) {
        const show = (e: typeof d) => (e ? `#${e.rank} ${e.member} ${e.scaled}` : 'nothing');
        out.push({ ...where, problem: `position ${offset + i + 1}: Postgres ${show(d)}, Redis ${show(c)}` });
        if (out.length >= MAX_DIFFERENCES) return;
      }
    }
    if (db.entries.length < PAGE && cache.entries.length < PAGE) return;
  }
}
