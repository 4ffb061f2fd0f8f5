import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { periodContaining, type PeriodWindow } from '../domain/period.js';
import { periodLabel } from '../domain/period-label.js';
import { listBoards } from '../storage/postgres/boards-repository.js';
import {
  beginClosing,
  duePeriods,
  grantAwards,
  lockClosing,
  markClosed,
  markWebhooksEnqueued,
  periodsAwaitingWebhooks,
  reportPage,
  writeFinalStandings,
  writeReports,
} from '../storage/postgres/closing-repository.js';
import { findPeriod } from '../storage/postgres/periods-repository.js';
import { ensureLedgerPartitions } from './ledger-partitions.js';
import { deliveryId, webhookJobOptions, type WebhookJob } from '../queue/webhooks-queue.js';

/**
 * The period tick (a BullMQ job scheduler runs it every 30 s): creates the current and the
 * next period of every board ahead of time, and the ledger partitions of the coming months,
 * closes every period whose endsAt + graceSeconds has passed (or that a crash left half
 * closed), and enqueues webhooks a crash left behind.
 */
export async function runTick(ctx: AppContext): Promise<{ created: number; closed: string[] }> {
  const now = ctx.clock.now();
  const boards = await listBoards(ctx.db);
  const created = await createUpcomingPeriods(ctx, boards, now);
  // Partition upkeep must never hold up closing: a month it cannot create now is created by
  // a later tick, and events meanwhile land in the default partition.
  await ensureLedgerPartitions(ctx, now).catch((err: Error) => ctx.log.warn({ err: err.message }, 'ledger partition upkeep failed; retried next tick'));
  const closed: string[] = [];
  const failures: string[] = [];
  const byId = new Map(boards.map((b) => [b.id, b]));
  for (const due of await duePeriods(ctx.db, now)) {
    const board = byId.get(due.boardId);
    if (!board) continue;
    // One period failing to close must not hold back the others; the job still fails after.
    try {
      if (await closePeriod(ctx, board, due.key)) closed.push(`${due.boardId}/${due.key}`);
    } catch (err) {
      ctx.log.error({ board: due.boardId, period: due.key, err: (err as Error).message }, 'closing failed; the next tick resumes it');
      failures.push(`${due.boardId}/${due.key}: ${(err as Error).message}`);
    }
  }
  if (ctx.env.WEBHOOK_URL) {
    for (const p of await periodsAwaitingWebhooks(ctx.db)) {
      const board = byId.get(p.boardId);
      if (board) await enqueueWebhooks(ctx, board, p.key);
    }
  }
  if (failures.length > 0) throw new Error(`could not close ${failures.join('; ')}`);
  return { created, closed };
}

async function createUpcomingPeriods(ctx: AppContext, boards: readonly Board[], now: Date): Promise<number> {
  const windows: Array<PeriodWindow & { boardId: string }> = [];
  for (const board of boards) {
    const current = periodContaining(board.period, board.timezone, now);
    windows.push({ boardId: board.id, ...current });
    if (current.endsAt) windows.push({ boardId: board.id, ...periodContaining(board.period, board.timezone, current.endsAt) });
  }
  if (windows.length === 0) return 0;
  const created = await ctx.db
    .insertInto('periods')
    .values(windows.map((w) => ({ board_id: w.boardId, key: w.key, starts_at: w.startsAt, ends_at: w.endsAt })))
    .onConflict((oc) => oc.columns(['board_id', 'key']).doNothing())
    .returning(['board_id', 'key'])
    .execute();
  // A period created empty is complete in Redis by construction.
  await ctx.leaderboard.project([], new Map(boards.map((b) => [b.id, b])), {
    createdPeriods: created.map((c) => ({ board: c.board_id, period: c.key })),
  });
  return created.length;
}

/**
 * Closes one period, exactly once in effect: the guarded open -> closing transition, then
 * one transaction that writes final standings, awards and reports (unique keys make a
 * repeat a no-op) and marks it closed. A crash in between leaves it `closing`, and the next
 * tick finishes it. Returns true when this call finished the close.
 */
export async function closePeriod(ctx: AppContext, board: Board, key: string): Promise<boolean> {
  const started = Date.now();
  const now = ctx.clock.now();
  await beginClosing(ctx.db, board.id, key, now);
  ctx.periods.forget(board.id, key);
  await ctx.faults.midClose?.(board.id, key);
  const stored = await findPeriod(ctx.db, board.id, key);
  if (!stored) return false;
  const label = periodLabel(board.period, stored.startsAt, board.timezone);
  const webhooks = Boolean(ctx.env.WEBHOOK_URL);
  // One snapshot for every scope: an exclusion committing mid-close cannot split them.
  const finished = await ctx.db.transaction().setIsolationLevel('repeatable read').execute(async (trx) => {
    if (!(await lockClosing(trx, board.id, key))) return false;
    await writeFinalStandings(trx, board, key);
    await grantAwards(trx, board, key, now);
    await writeReports(trx, board, key, label, now);
    await markClosed(trx, board.id, key, now);
    // Without a webhook receiver there is nothing to deliver, now or later.
    if (!webhooks) await markWebhooksEnqueued(trx, board.id, key, now);
    return true;
  });
  ctx.periods.forget(board.id, key);
  if (!finished) return false;
  ctx.metrics.closeDuration.observe((Date.now() - started) / 1000);
  ctx.log.info({ board: board.id, period: key, durationMs: Date.now() - started }, 'period closed');
  // Streams of the period end now rather than at their next look at the period's state.
  await ctx.leaderboard.notifyClosed(board.id, key).catch((err: Error) => ctx.log.warn({ err: err.message }, 'closed notice not published'));
  if (webhooks) await enqueueWebhooks(ctx, board, key);
  return true;
}

const WEBHOOK_PAGE = 1000;

/**
 * period.closed, then one member.period_report per ranked member in rank order, each with
 * a stable delivery id (its job id, so an enqueue repeated after a crash adds nothing while
 * the first is kept). Closing never waits for the receiver: this only enqueues.
 */
async function enqueueWebhooks(ctx: AppContext, board: Board, key: string): Promise<void> {
  const createdAt = ctx.clock.now().toISOString();
  const period = (await findPeriod(ctx.db, board.id, key))!;
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM period_results WHERE board_id = ${board.id} AND period_key = ${key} AND category = 'all' AND region = 'world'`.execute(ctx.db);
  const closed: WebhookJob = {
    deliveryId: deliveryId('period.closed', board.id, key),
    type: 'period.closed',
    createdAt,
    data: {
      board: board.id,
      period: { key, startsAt: period.startsAt.toISOString(), endsAt: period.endsAt?.toISOString() ?? null, state: 'closed' },
      rankedMembers: rows[0]!.n,
    },
  };
  await ctx.webhooksQueue.add(closed.type, closed, { ...webhookJobOptions, jobId: closed.deliveryId });
  for (let after = 0; ; ) {
    const page = await reportPage(ctx.db, board.id, key, after, WEBHOOK_PAGE);
    if (page.length === 0) break;
    await ctx.webhooksQueue.addBulk(
      page.map((r) => {
        const job: WebhookJob = {
          deliveryId: deliveryId('member.period_report', board.id, key, r.member),
          type: 'member.period_report',
          createdAt,
          data: { board: board.id, period: key, member: r.member, rank: r.rank, title: r.title, body: r.body, award: r.award },
        };
        return { name: job.type, data: job, opts: { ...webhookJobOptions, jobId: job.deliveryId } };
      }),
    );
    after = page[page.length - 1]!.id;
  }
  await markWebhooksEnqueued(ctx.db, board.id, key, ctx.clock.now());
}
