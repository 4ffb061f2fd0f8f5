import type { Job, Queue } from 'bullmq';
import type { RedisClient } from '../storage/redis/connections.js';
import type { RebuildQueue } from './rebuild-queue.js';
import { jobWithout, type ScoreEventsQueue, type ScoreJob } from './score-events-queue.js';
import type { WebhookJob, WebhooksQueue } from './webhooks-queue.js';

/** The queues whose jobs carry member ids (an erasure leaves no copy of the member there: docs/api.md, Erasure). */
export interface MemberQueues {
  scoreQueue: ScoreEventsQueue;
  rebuildQueue: RebuildQueue;
  webhooksQueue: WebhooksQueue;
}

/**
 * Finished score batches (kept minutes, failed ones days) and moderation re-projections
 * (kept days) carry member ids. Finished ones holding the member are removed; a failed
 * batch keeps the other members' events, which a retry still needs. Batches not yet run
 * are left alone: they apply after the erasure, as a new member (docs/api.md, Erasure: a new event for the
 * same id starts a new member).
 */
export async function removeQueuedCopies(queues: MemberQueues, member: string): Promise<void> {
  await forJobs(
    queues.scoreQueue as unknown as Queue,
    ['completed', 'failed'],
    (job: Job<ScoreJob>) => job.data.events.some((e) => e.posted.member === member),
    async (job, state) => {
      const kept = state === 'completed' ? null : jobWithout(job.data, member);
      if (!kept) await job.remove();
      else await job.updateData(kept);
    },
  );
  await forJobs(
    queues.rebuildQueue as unknown as Queue,
    ['completed', 'failed', 'delayed', 'waiting'],
    (job: Job<{ member?: unknown }>) => job.name === 'member' && job.data.member === member,
    (job) => job.remove(),
  );
  // The member's period reports, delivered or not (kept a day, failed ones two weeks): one
  // not yet delivered is never sent. One being delivered right now cannot be removed; its
  // retries find the report gone from Postgres and send nothing (webhook-delivery.ts).
  await forJobs(
    queues.webhooksQueue as unknown as Queue,
    ['completed', 'failed', 'delayed', 'waiting', 'prioritized'],
    (job: Job<WebhookJob>) => job.data.type === 'member.period_report' && job.data.data.member === member,
    (job) => job.remove(),
  );
}

/**
 * Visits the jobs of the given states that match, once all are listed: a removal would shift
 * the pages. Only the matches are kept meanwhile, so a queue of 100,000 finished jobs is read
 * in pages without being held whole.
 */
async function forJobs<T>(
  queue: Queue,
  states: Array<'completed' | 'failed' | 'delayed' | 'waiting' | 'prioritized'>,
  matches: (job: Job<T>) => boolean,
  visit: (job: Job<T>, state: string) => Promise<unknown>,
) {
  const PAGE = 500;
  for (const state of states) {
    const matching: Array<Job<T>> = [];
    for (let start = 0; ; start += PAGE) {
      const jobs = (await queue.getJobs([state], start, start + PAGE - 1)) as Array<Job<T> | undefined>;
      for (const job of jobs) if (job && matches(job)) matching.push(job);
      if (jobs.length < PAGE) break;
    }
    for (const job of matching) await visit(job, state);
  }
}

/**
 * Deletes the entries of BullMQ events streams (capped by BullMQ, ~10,000 entries each)
 * whose fields contain `text`: score results name no event since release 0.3, but those of a
 * worker of release 0.2, and rebuild jobs, may name a member, and an erasure leaves no trace of
 * the member (docs/api.md, Erasure). Read in pages.
 */
export async function forgetInEventStreams(redis: RedisClient, queues: MemberQueues, text: string): Promise<number> {
  const PAGE = 1000;
  let deleted = 0;
  for (const queue of [queues.scoreQueue, queues.rebuildQueue, queues.webhooksQueue]) {
    const stream = queue.keys.events!;
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
