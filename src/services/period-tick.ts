import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { overlapsWindow, periodContaining, type PeriodWindow } from '../domain/period.js';
import { listBoards } from '../storage/postgres/boards-repository.js';
import { duePeriods, periodsAwaitingWebhooks } from '../storage/postgres/closing-repository.js';
import { createPeriods } from '../storage/postgres/periods-repository.js';
import { ensureLedgerPartitions } from './ledger-partitions.js';
import { closeDueEmptyPeriods, closePeriod, enqueueWebhooks, placeLeftWaiting } from './period-closing.js';
import { evictRetiredPeriods } from './closed-period-retention.js';

/**
 * The period tick (a BullMQ job scheduler runs it every 30 s): creates the current and the
 * next period of every board ahead of time, and the ledger partitions of the coming months,
 * closes every period whose endsAt + graceSeconds has passed (or that a crash left half
 * closed), removes the Redis keys of periods closed longer than CLOSED_PERIOD_CACHE_HOURS,
 * and enqueues webhooks a crash left behind.
 */
export async function runTick(ctx: AppContext): Promise<{ created: number; closed: string[]; evicted: string[] }> {
  const now = ctx.clock.now();
  const boards = await listBoards(ctx.db);
  const created = await createUpcomingPeriods(ctx, boards, now);
  // Partition upkeep must never hold up closing: a month it cannot create now is created by
  // a later tick, and events meanwhile land in the default partition.
  await ensureLedgerPartitions(ctx, now).catch((err: Error) =>
    ctx.log.warn({ err: err.message }, 'ledger partition upkeep failed; retried next tick'),
  );
  const refusal = closingRefusal(ctx);
  if (refusal) {
    const skewMs = ctx.clock.skewMs?.();
    // Not measured yet is the first moments of a process: the next tick closes. Too far off
    // needs a person: the tick fails (retried, likely by another worker; counted and alerted).
    if (skewMs === undefined) {
      ctx.log.info(refusal);
      return { created, closed: [], evicted: [] };
    }
    throw new Error(`${refusal}: skew ${skewMs} ms, CLOCK_SKEW_REFUSE_MS ${ctx.env.CLOCK_SKEW_REFUSE_MS}`);
  }
  const byId = new Map(boards.map((b) => [b.id, b]));
  // Empty periods (most of them on boards with short periods) close in bulk; the rest one by one.
  const closed = await closeDueEmptyPeriods(ctx, byId, now);
  const failures: string[] = [];
  for (const due of await duePeriods(ctx.db, now)) {
    const board = byId.get(due.boardId);
    if (!board) continue;
    // One period failing to close must not hold back the others; the job still fails after,
    // naming each (the job runner logs it once), and the next tick resumes it.
    try {
      if (await closePeriod(ctx, board, due.key)) closed.push(`${due.boardId}/${due.key}`);
    } catch (err) {
      failures.push(`${due.boardId}/${due.key}: ${(err as Error).message}`);
    }
  }
  await placeLeftWaiting(ctx).catch((err: Error) => failures.push(`league placement: ${err.message}`));
  // Like partition upkeep, retention must never hold up closing; what is left, a later tick removes.
  const evicted = await evictRetiredPeriods(ctx, now).catch((err: Error) => {
    ctx.log.warn({ err: err.message }, 'closed-period retention failed; retried next tick');
    return [];
  });
  if (ctx.env.WEBHOOK_URL) {
    for (const p of await periodsAwaitingWebhooks(ctx.db)) {
      const board = byId.get(p.boardId);
      if (board) await enqueueWebhooks(ctx, board, p.key);
    }
  }
  if (failures.length > 0) throw new Error(`could not close ${failures.join('; ')}`);
  return { created, closed, evicted };
}

/**
 * Why this process must not close periods now, or undefined: its clock is not measured
 * against Postgres' yet, or is further off than CLOCK_SKEW_REFUSE_MS (another process, or
 * this one once its host's clock is fixed, closes them; closing is idempotent).
 */
function closingRefusal(ctx: AppContext): string | undefined {
  if (!ctx.clock.skewMs) return undefined;
  const skew = ctx.clock.skewMs();
  if (skew === undefined) return "no period closed: this process's clock is not measured against Postgres' yet";
  if (Math.abs(skew) > ctx.env.CLOCK_SKEW_REFUSE_MS)
    return "no period closed: this host's clock is too far from Postgres' (CLOCK_SKEW_REFUSE_MS)";
  return undefined;
}

async function createUpcomingPeriods(ctx: AppContext, boards: readonly Board[], now: Date): Promise<number> {
  const windows: Array<PeriodWindow & { boardId: string }> = [];
  for (const board of boards) {
    const current = periodContaining(board, now);
    const next = current.endsAt && periodContaining(board, current.endsAt);
    for (const period of next && next.key !== current.key ? [current, next] : [current]) {
      if (overlapsWindow(board.window, period)) windows.push({ boardId: board.id, ...period });
    }
  }
  if (windows.length === 0) return 0;
  const created = await createPeriods(ctx.db, windows);
  // A period created empty is complete in Redis by construction.
  await ctx.leaderboard.project([], new Map(boards.map((b) => [b.id, b])), { createdPeriods: created });
  return created.length;
}
