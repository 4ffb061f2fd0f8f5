import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.js';
import { recomputeAggregates } from '../storage/postgres/moderation-repository.js';
import { aggregatePage, countAggregates } from '../storage/postgres/standings-repository.js';
import { recordRebuild } from '../storage/postgres/rebuild-log-repository.js';
import { ScopeRebuildWriter } from '../storage/redis/scope-rebuild.js';
import type { ScopeJob, ScopeJobResult } from '../queue/rebuild-queue.js';
import { findPeriod } from '../storage/postgres/periods-repository.js';
import { rebuildSkips } from './rebuild-service.js';

const PAGE_SIZE = 5000;

/**
 * Refills one category of a period (its world scope, region scopes and member state) from
 * Postgres, page by page in member-id order (memory stays flat whatever the board size),
 * into temp keys that replace the live ones in one atomic swap.
 *
 * Ingestion goes on meanwhile: from the moment the rebuild registers its token, every live
 * projection of the category also waits in the rebuild's pending hash, replayed into the temp
 * keys before the swap, and the versions decide which write wins, so whatever is applied
 * during the rebuild is in the swapped-in scope.
 */
export async function processScopeRebuild(
  ctx: AppContext,
  job: ScopeJob,
  onProgress: (progress: { members: number; total: number; percent: number }) => Promise<void> = async () => undefined,
): Promise<ScopeJobResult | { superseded: true } | { skipped: 'retired' | 'closed' }> {
  const started = Date.now();
  // Checked again before the swap: a read or a projection that raced the close or the
  // retirement must not bring keys back that the final results answer for.
  const skip = async () => {
    const period = await findPeriod(ctx.db, job.board, job.period);
    return period === undefined
      ? null
      : rebuildSkips(period, job.trigger, ctx.clock.now(), ctx.env.CLOSED_PERIOD_CACHE_HOURS);
  };
  const skippedAtStart = await skip();
  if (skippedAtStart) return { skipped: skippedAtStart };
  const board = (await ctx.boards.getMany([job.board], { fresh: true })).get(job.board);
  if (!board) throw new Error(`board ${job.board} not found`);
  const ref = { board: job.board, period: job.period, category: job.category };
  const writer = new ScopeRebuildWriter(ctx.leaderboard, board, job.period, job.category, randomUUID());

  // Recompute first: any rebuild that begins later then reads the recomputed rows, and any
  // that began earlier is superseded by this one's token before it can swap stale values in.
  if (job.fromEvents) {
    await recomputeAggregates(
      ctx.db,
      { board: job.board, period: job.period, member: null, category: job.category },
      ctx.clock.now(),
    );
  }
  await writer.begin();
  // Postgres and Redis work at once: the next page is read while this one is written (two
  // pages in memory at most, so memory stays flat), and the count only feeds progress.
  const nextPage = (after: string) => {
    const page = aggregatePage(ctx.db, ref, after, PAGE_SIZE);
    page.catch(() => undefined); // a read ahead nobody awaits (the job failed first) must not crash the process
    return page;
  };
  let pending = nextPage('');
  const total = await countAggregates(ctx.db, ref);
  let members = 0;
  for (;;) {
    const page = await pending;
    if (page.length === 0) break;
    pending = page.length < PAGE_SIZE ? Promise.resolve([]) : nextPage(page[page.length - 1]!.member);
    if (!(await writer.fill(page))) return { superseded: true };
    members += page.filter((a) => !a.hidden).length;
    const done = Math.min(total, members);
    await onProgress({ members: done, total, percent: total === 0 ? 100 : Math.round((done / total) * 100) });
  }
  // Retired (or, for an automatic rebuild, closed) while this ran: a retired period's keys
  // may be gone already (the eviction removes the `rb` registration too, so a swap after it
  // refuses; one registered after it would not).
  const skippedAtEnd = await skip();
  if (skippedAtEnd) {
    await writer.abandon();
    return { skipped: skippedAtEnd };
  }
  const swapped = await writer.swap();
  if (swapped === 'superseded') return { superseded: true };
  if (swapped === 'expired') throw new Error('rebuild temp keys expired before the swap; starting over');
  const result: ScopeJobResult = {
    ...ref,
    members,
    durationMs: Date.now() - started,
    recomputed: job.fromEvents === true,
  };
  await recordRebuild(ctx.db, { ...ref, members, durationMs: result.durationMs, finishedAt: ctx.clock.now() });
  ctx.metrics.rebuildDuration.observe(result.durationMs / 1000);
  ctx.log.info({ ...result, trigger: job.trigger }, 'scope rebuilt');
  return result;
}
