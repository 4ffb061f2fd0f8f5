import { setTimeout as sleep } from 'node:timers/promises';
import { UnrecoverableError, type Job, type Queue } from 'bullmq';
import type { AppContext } from '../src/context.js';
import type { ErasureJob } from '../src/queue/rebuild-queue.js';
import type { ScoreJob } from '../src/queue/score-events-queue.js';
import { memberHash } from '../src/services/erasure-service.js';
import { forgetInEventStreams } from '../src/storage/redis/queue-events.js';
import { eraseMemberRows, findErasure, setErasureState } from '../src/storage/postgres/erasure-repository.js';

/**
 * A projection of the member's events committed just before the erasure took the member's
 * lock may reach Redis just after the erasure's first Redis pass: a second pass this much
 * later removes it.
 */
const SETTLE_MS = 1000;

/**
 * Erases a member (docs/api.md, Erasure), safe to run again at any step: Postgres first, in one
 * transaction that also records which periods' Redis keys held the member; then those
 * (from the record, so a retry after the commit still knows them); then the score and
 * rebuild jobs, and the queues' event stream entries, still holding the member's id in the
 * queue Redis. On the last attempt's
 * failure the erasure is marked failed. Logs name the erasure, never the member.
 */
export async function processErasure(ctx: AppContext, { erasureId, member }: ErasureJob, job: Job): Promise<{ periods: number }> {
  try {
    const erasure = await findErasure(ctx.db, erasureId);
    if (!erasure) throw new Error(`erasure ${erasureId} not recorded yet`);
    if (erasure.memberHash !== memberHash(member)) throw new UnrecoverableError(`erasure ${erasureId}: the job's member is not the recorded one`);
    if (erasure.state === 'done') return { periods: 0 };
    const periods = erasure.redisPeriods ?? (await eraseMemberRows(ctx.db, erasureId, member, erasure.pseudonym));
    const boards = await ctx.boards.getMany(periods.map((p) => p.board));
    const inRedis = periods.flatMap((p) => {
      const board = boards.get(p.board);
      return board ? [{ board, period: p.period, closed: p.closed === true }] : [];
    });
    await ctx.leaderboard.erase(inRedis, member);
    await ctx.members.erased(member);
    await removeQueuedCopies(ctx, member);
    await sleep(SETTLE_MS);
    await ctx.leaderboard.erase(inRedis, member);
    await forgetInEventStreams(ctx.queueRedis, [ctx.scoreQueue.keys.events!, ctx.rebuildQueue.keys.events!], member);
    await setErasureState(ctx.db, erasureId, 'done', ctx.clock.now());
    ctx.log.info({ erasureId, periods: periods.length }, 'member erased');
    return { periods: periods.length };
  } catch (err) {
    const last = err instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (last) await setErasureState(ctx.db, erasureId, 'failed', ctx.clock.now()).catch(() => undefined);
    throw err;
  }
}

/**
 * Finished score batches (kept minutes, failed ones days) and moderation re-projections
 * (kept days) carry member ids. Finished ones holding the member are removed; a failed
 * batch keeps the other members' events, which a retry still needs. Batches not yet run
 * are left alone: they apply after the erasure, as a new member (a new event for the
 * same id starts a new member).
 */
async function removeQueuedCopies(ctx: AppContext, member: string): Promise<void> {
  await forJobs(ctx.scoreQueue as unknown as Queue, ['completed', 'failed'], async (job: Job<ScoreJob>, state) => {
    const kept = job.data.events.filter((e) => e.posted.member !== member);
    if (kept.length === job.data.events.length) return;
    if (state === 'completed' || kept.length === 0) await job.remove();
    else await job.updateData({ ...job.data, events: kept });
  });
  await forJobs(ctx.rebuildQueue, ['completed', 'failed', 'delayed', 'waiting'], async (job: Job<{ member?: unknown }>) => {
    if (job.name === 'member' && job.data.member === member) await job.remove();
  });
}

/** Every job of the given states, listed whole before any is visited: a removal would shift the pages. */
async function forJobs<T>(queue: Queue, states: Array<'completed' | 'failed' | 'delayed' | 'waiting'>, visit: (job: Job<T>, state: string) => Promise<void>) {
  const PAGE = 500;
  for (const state of states) {
    const all: Array<Job<T>> = [];
    for (let start = 0; ; start += PAGE) {
      const jobs = (await queue.getJobs([state], start, start + PAGE - 1)) as Array<Job<T> | undefined>;
      for (const job of jobs) if (job) all.push(job);
      if (jobs.length < PAGE) break;
    }
    for (const job of all) await visit(job, state);
  }
}
