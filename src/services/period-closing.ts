import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { periodLabel } from '../domain/period-label.js';
import {
  beginClosing,
  beginClosingDue,
  finishEmptyClosings,
  markWebhooksEnqueuedMany,
  grantAwards,
  lockClosing,
  markClosed,
  markWebhooksEnqueued,
  rankedMemberCount,
  reportPage,
  writeFinalStandings,
  writeReports,
} from '../storage/postgres/closing-repository.js';
import { findPeriod, type StoredPeriod } from '../storage/postgres/periods-repository.js';
import { closeLeague, periodsWithWaitingMembers, placeWaitingMembers } from '../storage/postgres/league-repository.js';
import { deliveryId, webhookJobOptions, type WebhookJob } from '../queue/webhooks-queue.js';
import { enqueue, enqueueBulk } from '../queue/enqueue.js';

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
  const label = periodLabel(board, stored);
  const webhooks = Boolean(ctx.env.WEBHOOK_URL);
  // One snapshot for every scope: an exclusion committing mid-close cannot split them.
  const finished = await ctx.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      if (!(await lockClosing(trx, board.id, key))) return false;
      await writeFinalStandings(trx, board, key);
      if (board.league) await closeLeague(trx, { ...board, league: board.league }, key, now);
      await grantAwards(trx, board, key, now);
      await writeReports(trx, board, key, label, now);
      await markClosed(trx, board.id, key, now);
      // Without a webhook receiver there is nothing to deliver, now or later.
      if (!webhooks) await markWebhooksEnqueued(trx, board.id, key, now);
      return true;
    });
  ctx.periods.forget(board.id, key);
  // Members who played on while this close was pending take their places now (docs/design/leagues.md).
  if (board.league) await placeWaitingMembers(ctx.db, board.id, key, now);
  if (!finished) return false;
  ctx.metrics.closeDuration.observe((Date.now() - started) / 1000);
  ctx.log.info({ board: board.id, period: key, durationMs: Date.now() - started }, 'period closed');
  // Streams of the period end now rather than at their next look at the period's state.
  await ctx.leaderboard
    .notifyClosed(board.id, key)
    .catch((err: Error) => ctx.log.warn({ err: err.message }, 'closed notice not published'));
  if (webhooks) await enqueueWebhooks(ctx, board, key);
  return true;
}

/**
 * Closes every due period no event reached with two statements in all: the guarded
 * open -> closing transition of all due periods, then closed for those without aggregates
 * (nothing to rank, award or report). Their `period.closed` webhooks are enqueued in one
 * bulk add. Periods with events stay `closing` for closePeriod. Returns "board/key" of each.
 */
export async function closeDueEmptyPeriods(
  ctx: AppContext,
  boards: ReadonlyMap<string, Board>,
  now: Date,
): Promise<string[]> {
  if ((await beginClosingDue(ctx.db, now)) === 0) return [];
  const webhooks = Boolean(ctx.env.WEBHOOK_URL);
  const emptied = await finishEmptyClosings(ctx.db, now, !webhooks);
  if (emptied.length === 0) return [];
  for (const p of emptied) ctx.periods.forget(p.boardId, p.key);
  await ctx.leaderboard
    .notifyClosedMany(emptied.map((p) => ({ board: p.boardId, period: p.key })))
    .catch((err: Error) => ctx.log.warn({ err: err.message }, 'closed notices not published'));
  if (webhooks) {
    const createdAt = ctx.clock.now().toISOString();
    const jobs = emptied
      .filter((p) => boards.has(p.boardId))
      .map((p) => periodClosedJob(p.boardId, { ...p, state: 'closed', closedAt: now }, 0, createdAt));
    await enqueueBulk(
      ctx.webhooksQueue,
      jobs.map((job) => ({ name: job.type, data: job, opts: { ...webhookJobOptions, jobId: job.deliveryId } })),
    );
    await markWebhooksEnqueuedMany(ctx.db, emptied, ctx.clock.now());
  }
  ctx.log.info({ periods: emptied.length }, 'empty periods closed');
  return emptied.map((p) => `${p.boardId}/${p.key}`);
}

function periodClosedJob(boardId: string, period: StoredPeriod, rankedMembers: number, createdAt: string): WebhookJob {
  return {
    deliveryId: deliveryId('period.closed', boardId, period.key),
    type: 'period.closed',
    createdAt,
    data: {
      board: boardId,
      period: {
        key: period.key,
        startsAt: period.startsAt.toISOString(),
        endsAt: period.endsAt?.toISOString() ?? null,
        state: 'closed',
      },
      rankedMembers,
    },
  };
}

const WEBHOOK_PAGE = 1000;

/**
 * period.closed, then one member.period_report per ranked member in rank order, each with
 * a stable delivery id (its job id, so an enqueue repeated after a crash adds nothing while
 * the first is kept). Closing never waits for the receiver: this only enqueues.
 */
export async function enqueueWebhooks(ctx: AppContext, board: Board, key: string): Promise<void> {
  const createdAt = ctx.clock.now().toISOString();
  const period = (await findPeriod(ctx.db, board.id, key))!;
  const closed = periodClosedJob(board.id, period, await rankedMemberCount(ctx.db, board.id, key), createdAt);
  await enqueue(ctx.webhooksQueue, closed.type, closed, { ...webhookJobOptions, jobId: closed.deliveryId });
  for (let after = 0; ;) {
    const page = await reportPage(ctx.db, board.id, key, after, WEBHOOK_PAGE);
    if (page.length === 0) break;
    await enqueueBulk(
      ctx.webhooksQueue,
      page.map((r) => {
        const job: WebhookJob = {
          deliveryId: deliveryId('member.period_report', board.id, key, r.member),
          type: 'member.period_report',
          createdAt,
          data: {
            board: board.id,
            period: key,
            member: r.member,
            rank: r.rank,
            title: r.title,
            body: r.body,
            award: r.award,
          },
        };
        return { name: job.type, data: job, opts: { ...webhookJobOptions, jobId: job.deliveryId } };
      }),
    );
    after = page[page.length - 1]!.id;
  }
  await markWebhooksEnqueued(ctx.db, board.id, key, ctx.clock.now());
}

/** Places the members a league close left waiting when the process died right after it (docs/design/leagues.md). */
export async function placeLeftWaiting(ctx: AppContext): Promise<void> {
  for (const p of await periodsWithWaitingMembers(ctx.db))
    await placeWaitingMembers(ctx.db, p.boardId, p.key, ctx.clock.now());
}
