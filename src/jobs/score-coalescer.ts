import { UnrecoverableError, type Job, type Worker } from 'bullmq';
import type { AppContext } from '../context.js';
import { Unavailable } from '../domain/errors.js';
import { scoreJobSchema, type ScoreJob, type ScoreJobResult } from '../queue/score-events-queue.js';
import { applyScoreJobs, processScoreJob, publishScoreJobs, type HeldScoreJob } from '../services/score-application.js';
import { asJobError } from './job-errors.js';

/**
 * How much one score job run takes on (the job BullMQ handed over plus the waiting jobs it
 * takes itself). Events: what one laurel_apply_batch call gets at most, the size at which a
 * call's fixed cost no longer matters; jobs bound the locks held and the results sent back.
 */
export const COALESCE_MAX_EVENTS = 1000;
export const COALESCE_MAX_JOBS = 256;
/** Waiting jobs are taken in parallel waves of at most this many moves to active. */
const MAX_WAVE = 16;

/** A waiting job this run took from the queue itself, with the token of its lock. */
interface Rider {
  job: Job;
  token: string;
  data: ScoreJob;
}

type Settled = { result: ScoreJobResult } | { error: unknown };

let tokens = 0;

/**
 * Applies the job BullMQ handed over together with every job waiting behind it, up to the
 * bounds above: one laurel_apply_batch call and one projection round trip for all of them
 * (one-event requests otherwise each pay the whole fixed cost of both). Each job still ends
 * with its own result or its own failure: this run completes or fails the jobs it took,
 * and returns (or throws) the handed-over job's, which BullMQ finishes as usual.
 *
 * Crash safety is the single job's: every job held is active under its own lock (renewed
 * here for the jobs taken), so a dead worker's jobs all come back through stalled-job
 * recovery, and the idempotent ledger makes applying them again a no-op.
 */
export async function processCoalesced(
  ctx: AppContext,
  worker: Worker | undefined,
  leader: Job,
  data: ScoreJob,
): Promise<ScoreJobResult> {
  const riders = worker ? await takeWaiting(ctx, worker, data.events.length) : [];
  if (riders.length === 0) return processScoreJob(ctx, data, leader.id);
  const renewal = keepLocks(ctx, worker!, riders);
  try {
    const settled = await applyInRounds(ctx, [
      { id: leader.id, data },
      ...riders.map((r) => ({ id: r.job.id, data: r.data })),
    ]);
    await Promise.all(riders.map((rider, i) => finish(ctx, worker!, rider, settled[i + 1]!)));
    const own = settled[0]!;
    if ('error' in own) throw own.error;
    return own.result;
  } finally {
    clearInterval(renewal);
  }
}

/**
 * Moves waiting jobs to active for this run, in waves that double while the queue has more
 * (so an idle queue costs one move per run). A wave is sized by the largest job seen, so a
 * run rarely takes far more events than it applies in one call.
 */
async function takeWaiting(ctx: AppContext, worker: Worker, firstEvents: number): Promise<Rider[]> {
  const riders: Rider[] = [];
  let events = firstEvents;
  let largest = firstEvents;
  let wave = 1;
  for (;;) {
    const size = Math.min(
      wave,
      COALESCE_MAX_JOBS - 1 - riders.length,
      Math.floor((COALESCE_MAX_EVENTS - events) / largest),
    );
    if (size < 1) return riders;
    // Settled one by one: a move that fails (the queue Redis refusing a write, say) must not
    // lose the jobs the others took, which are active under this run's locks.
    const taken = await Promise.allSettled(
      Array.from({ length: size }, async () => {
        const token = `${worker.id}:coalesced:${(tokens += 1)}`;
        const job = (await worker.getNextJob(token, { block: false })) as Job | undefined;
        return job ? { job, token } : undefined;
      }),
    );
    let exhausted = false;
    for (const move of taken) {
      if (move.status === 'rejected')
        ctx.log.debug({ err: (move.reason as Error).message }, 'could not take a waiting score job');
      const held = move.status === 'fulfilled' ? move.value : undefined;
      if (!held) {
        exhausted = true;
        continue;
      }
      const parsed = held.job.name === 'apply' ? scoreJobSchema.safeParse(held.job.data) : undefined;
      if (!parsed?.success) {
        // As the dispatcher does for a job it is handed: it would never succeed.
        await finish(
          ctx,
          worker,
          { ...held, data: { events: [] } },
          { error: new UnrecoverableError(`invalid score job "${held.job.name}"`) },
        );
        continue;
      }
      riders.push({ ...held, data: parsed.data });
      events += parsed.data.events.length;
      largest = Math.max(largest, parsed.data.events.length);
    }
    if (exhausted) return riders;
    wave = Math.min(wave * 2, MAX_WAVE);
  }
}

/** Renews the locks of the jobs taken, as the worker does for the job it handed over. */
function keepLocks(ctx: AppContext, worker: Worker, riders: readonly Rider[]): NodeJS.Timeout {
  const duration = worker.opts.lockDuration ?? 30_000;
  const timer = setInterval(() => {
    for (const { job, token } of riders) {
      // A lock already lost is reported when the job is finished (see finish).
      job
        .extendLock(token, duration)
        .catch((err: Error) => ctx.log.debug({ jobId: job.id, err: err.message }, 'lock not renewed'));
    }
  }, duration / 2);
  timer.unref();
  return timer;
}

/**
 * Jobs sharing an idempotency key, or a member of a board, are applied one after the other,
 * in queue order, never in one call: inside a call a repeated key follows its first copy and
 * a member's events are judged together (a sum's range, the placement before the batch that
 * `previousRank` reports), while across requests each must be judged as if it had come
 * alone. On a board whose entry depends on arrival (maxMembers entrants, league buckets:
 * within a batch by first events, across batches in the order applied), every job that
 * touches the board comes after the previous one, so requests enter as they were queued. So
 * every job goes to the round after the last one holding any of its keys, members or
 * arrival-ordered boards; rounds are cut at COALESCE_MAX_EVENTS.
 */
async function applyInRounds(ctx: AppContext, held: readonly HeldScoreJob[]): Promise<Settled[]> {
  const boards = await ctx.boards.getMany(new Set(held.flatMap((job) => job.data.events.map((e) => e.posted.board))));
  const arrivalOrdered = (id: string) => {
    const board = boards.get(id);
    return board !== undefined && (board.maxMembers !== null || board.league !== null);
  };
  const roundOf = new Map<string, number>();
  const rounds: number[][] = [];
  held.forEach((job, index) => {
    const keys = job.data.events.flatMap((e) => [
      `key\n${e.posted.idempotencyKey}`,
      `member\n${e.posted.board}\n${e.posted.member}`,
      ...(arrivalOrdered(e.posted.board) ? [`board\n${e.posted.board}`] : []),
    ]);
    const round = Math.max(0, ...keys.map((k) => (roundOf.get(k) ?? -1) + 1));
    for (const key of keys) roundOf.set(key, round);
    (rounds[round] ??= []).push(index);
  });
  const settled: Settled[] = [];
  for (const round of rounds) {
    let call: number[] = [];
    let events = 0;
    for (const index of [...round, -1]) {
      const size = index < 0 ? 0 : held[index]!.data.events.length;
      if (call.length > 0 && (index < 0 || events + size > COALESCE_MAX_EVENTS)) {
        const out = await applyTogether(
          ctx,
          call.map((i) => held[i]!),
        );
        call.forEach((i, k) => (settled[i] = out[k]!));
        call = [];
        events = 0;
      }
      if (index >= 0) {
        call.push(index);
        events += size;
      }
    }
  }
  return settled;
}

/**
 * One call for the group. If the call fails before its commit for a reason of the events
 * themselves (a board deleted, text Postgres cannot store), each job is applied alone, so
 * only the job at fault fails; an outage or a timeout fails them all (each is retried by BullMQ), as
 * does a failure after the commit (the retry finds its events applied and projects them).
 */
async function applyTogether(ctx: AppContext, group: readonly HeldScoreJob[]): Promise<Settled[]> {
  if (group.length === 1) return [await settle(() => processScoreJob(ctx, group[0]!.data, group[0]!.id))];
  let applied;
  try {
    applied = await applyScoreJobs(ctx, group);
  } catch (err) {
    // An outage or a busy database (Contention is Unavailable) is no fault of one job: applying
    // them one at a time would only multiply the load; each is retried by BullMQ instead.
    if (ctx.failureOf(err) instanceof Unavailable) return group.map(() => ({ error: err }));
    ctx.log.warn(
      { jobs: group.length, err: (err as Error).message },
      'coalesced jobs failed together; applying each alone',
    );
    const alone: Settled[] = [];
    for (const job of group) alone.push(await settle(() => processScoreJob(ctx, job.data, job.id)));
    return alone;
  }
  try {
    return (await publishScoreJobs(ctx, applied)).map((result) => ({ result }));
  } catch (err) {
    return group.map(() => ({ error: err }));
  }
}

async function settle(run: () => Promise<ScoreJobResult>): Promise<Settled> {
  try {
    return { result: await run() };
  } catch (error) {
    return { error };
  }
}

/**
 * Completes or fails a job this run took, as BullMQ does for the job it hands over, and
 * emits the same worker event, so one place logs and counts every run (start-workers.ts).
 */
async function finish(ctx: AppContext, worker: Worker, rider: Rider, settled: Settled): Promise<void> {
  try {
    if ('result' in settled) {
      await rider.job.moveToCompleted(settled.result, rider.token, false);
      worker.emit('completed', rider.job, settled.result, 'active');
    } else {
      const failure = asJobError(settled.error);
      const error = failure instanceof Error ? failure : new Error(String(failure));
      await rider.job.moveToFailed(error, rider.token, false);
      worker.emit('failed', rider.job, error, 'active');
    }
  } catch (err) {
    // Its lock was lost (this run outlived it): the job runs again elsewhere, a no-op in the ledger.
    ctx.log.warn(
      { jobId: rider.job.id, err: (err as Error).message },
      'a coalesced job could not be finished; it will run again',
    );
  }
}
