import type { AppContext } from '../context.js';
import type { Board } from '../domain/board.js';
import { periodLabel } from '../domain/period-label.js';
import {
  beginClosing,
  grantAwards,
  lockClosing,
  markClosed,
  markWebhooksEnqueued,
  rankedMemberCount,
  reportPage,
  writeFinalStandings,
  writeReports,
} from '../storage/postgres/closing-repository.js';
import { findPeriod } from '../storage/postgres/periods-repository.js';
import { deliveryId, webhookJobOptions, type WebhookJob } from '../queue/webhooks-queue.js';

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
  if (webhooks) await enqueueWebhooks(ctx, board, key);
  return true;
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
  const closed: WebhookJob = {
    deliveryId: deliveryId('period.closed', board.id, key),
    type: 'period.closed',
    createdAt,
    data: {
      board: board.id,
      period: { key, startsAt: period.startsAt.toISOString(), endsAt: period.endsAt?.toISOString() ?? null, state: 'closed' },
      rankedMembers: await rankedMemberCount(ctx.db, board.id, key),
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
