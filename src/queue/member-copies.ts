import type { Job, Queue } from 'bullmq';
import type { RedisClient } from '../storage/redis/connections.js';
import type { RebuildQueue } from './rebuild-queue.js';
import { jobWithout, type ScoreEventsQueue, type ScoreJob } from './score-events-queue.js';

/** The queues whose jobs carry member ids (an erasure leaves no copy of the member there: docs/api.md, Erasure). */
export interface MemberQueues {
  scoreQueue: ScoreEventsQueue;
  rebuildQueue: RebuildQueue;
}

/**
 * Finished score batches (kept minutes, failed ones days) and moderation re-projections
 * (kept days) carry member ids. Finished ones holding the member are removed; a failed
 * batch keeps the other members' events, which a retry still needs. Batches not yet run
 * are left alone: they apply after the erasure, as a new member (docs/api.md, Erasure: a new event for the
 * same id starts a new member).
 */
export async function removeQueuedCopies(queues: MemberQueues, member: string): Promise<void> {
  await forJobs(queues.scoreQueue as unknown as Queue, ['completed', 'failed'], async (job: Job<ScoreJob>, state) => {
    if (!job.data.events.some((e) => e.posted.member === member)) return;
    const kept = state === 'completed' ? null : jobWithout(job.data, member);
    if (!kept) await job.remove();
    else await job.updateData(kept);
  });
  await forJobs(
    queues.rebuildQueue as unknown as Queue,
    ['completed', 'failed', 'delayed', 'waiting'],
    async (job: Job<{ member?: unknown }>) => {
      if (job.name === 'member' && job.data.member === member) await job.remove();
    },
  );
}

/** Every job of the given states, listed whole before any is visited: a removal would shift the pages. */
async function forJobs<T>(
  queue: Queue,
  states: Array<'completed' | 'failed' | 'delayed' | 'waiting'>,
  visit: (job: Job<T>, state: string) => Promise<void>,
) {
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

/**
 * Deletes the entries of BullMQ events streams (capped by BullMQ, ~10,000 entries each)
 * whose fields contain `text`: a finished job's return value may name a member through its
 * idempotency keys, and an erasure leaves no trace of the member (docs/api.md, Erasure). Read in pages.
 */
export async function forgetInEventStreams(redis: RedisClient, queues: MemberQueues, text: string): Promise<number> {
  const PAGE = 1000;
  let deleted = 0;
  for (const stream of [queues.scoreQueue.keys.events!, queues.rebuildQueue.keys.events!]) {
    let start = '-';
    for (;;) {
      const entries = await redis.xrange(stream, start, '+', 'COUNT', PAGE);
      const matching = entries.filter(([, fields]) => fields.some((f) => f.includes(text))).map(([id]) => id);
      if (matching.length > 0) deleted += await redis.xdel(stream, ...matching);
      if (entries.length < PAGE) break;
      start = `(${entries[entries.length - 1]![0]}`;
    }
  }
  return deleted;
}
