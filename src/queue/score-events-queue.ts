import type { Job, JobsOptions } from 'bullmq';
import type { RedisClient } from '../storage/redis/connections.js';
import { z } from 'zod';
import { scoreEventSchema } from '../domain/event.js';
import { createContractQueue, type ContractQueue } from './enqueue.js';

/**
 * The contract of the "score-events" queue: one job per group of intake requests (a web
 * process joins concurrent requests into one job, src/services/intake-groups.ts), never one
 * per event. Optional fields stay optional so jobs queued before a deploy still parse after it.
 */
export const SCORE_EVENTS_QUEUE = 'score-events';

const queuedEventSchema = z.object({
  posted: scoreEventSchema,
  receivedAt: z.string(),
  payloadHash: z.string(),
});

/** One intake request of a group: it owns the next `events` events of the job, in order. */
const queuedRequestSchema = z.object({
  events: z.number().int().min(1),
  /** Set by `?wait=true`: the worker then returns this request's per-event results with score and rank. */
  wantResults: z.boolean().optional(),
});

export const scoreJobSchema = z
  .object({
    events: z.array(queuedEventSchema).min(1),
    /** The requests of the group, in arrival order. Absent: the whole job is one request (a job of release 0.2). */
    requests: z.array(queuedRequestSchema).min(1).optional(),
    /** The one request's `?wait=true`, for a job without `requests`. */
    wantResults: z.boolean().optional(),
  })
  .refine((job) => !job.requests || job.requests.reduce((n, r) => n + r.events, 0) === job.events.length, {
    message: "the requests' event counts must add up to the job's events",
    path: ['requests'],
  });

export type ScoreJob = z.infer<typeof scoreJobSchema>;
export type QueuedEvent = ScoreJob['events'][number];

/** One request of a job, its events cut out of the job's. */
export interface QueuedRequest {
  events: QueuedEvent[];
  wantResults: boolean;
}

/** The requests of a job, in arrival order (a job without `requests` is one request). */
export function requestsOf(job: ScoreJob): QueuedRequest[] {
  if (!job.requests) return [{ events: job.events, wantResults: job.wantResults === true }];
  let first = 0;
  return job.requests.map((r) => {
    const events = job.events.slice(first, first + r.events);
    first += r.events;
    return { events, wantResults: r.wantResults === true };
  });
}

/** The job of a group of requests: their events in arrival order, each request owning its range. */
export function jobOf(requests: readonly QueuedRequest[]): ScoreJob {
  return {
    events: requests.flatMap((r) => r.events),
    requests: requests.map((r) =>
      r.wantResults ? { events: r.events.length, wantResults: true } : { events: r.events.length },
    ),
  };
}

/**
 * An event's outcome as a job's result stores it, for `?wait=true`: without its key or board.
 * The result, and the events stream's copy of it, stay in the queue Redis for hours where an
 * erasure cannot find them by member, and a key often names its member; the intake names each
 * result from its own request's events, in whose order the results are.
 */
export interface EventResult {
  /** Only in results of a worker of release 0.2. */
  idempotencyKey?: string;
  /** Only in results of a worker of release 0.2. */
  board?: string;
  status: 'applied' | 'duplicate' | 'rejected';
  reason?: string;
  period: string;
  score: number | null;
  rank: number | null;
  /** The member's (all, world) placement before the request; absent from results of a worker of release 0.2. */
  previousScore?: number | null;
  previousRank?: number | null;
}

export interface ScoreJobResult {
  /** Per request of the job, in its order: the results of a request that asked for them. */
  requests?: Array<{ results?: EventResult[] }>;
  /** The one request's results, for a job without `requests` (and from a worker of release 0.2). */
  results?: EventResult[];
}

/** The job's result from each request's own: per request, and for a job without `requests` also as release 0.2 gave it. */
export function resultOf(job: ScoreJob, perRequest: ReadonlyArray<EventResult[] | undefined>): ScoreJobResult {
  const requests = perRequest.map((results) => (results ? { results } : {}));
  if (job.requests) return { requests };
  return perRequest[0] ? { requests, results: perRequest[0] } : { requests };
}

/** The results of request `index` of a job, from its result (null: not asked for, or a worker of release 0.2 left them out). */
export function requestResults(result: ScoreJobResult | undefined, index: number): EventResult[] | null {
  return result?.requests?.[index]?.results ?? (index === 0 && !result?.requests ? (result?.results ?? null) : null);
}

/**
 * The job without a member's events (erasure), each request keeping the rest of its own;
 * null when nothing is left.
 */
export function jobWithout(job: ScoreJob, member: string): ScoreJob | null {
  const kept = requestsOf(job)
    .map((r) => ({ ...r, events: r.events.filter((e) => e.posted.member !== member) }))
    .filter((r) => r.events.length > 0);
  if (kept.length === 0) return null;
  return job.requests ? jobOf(kept) : { ...job, events: kept[0]!.events };
}

/**
 * Retries are what make a 202 safe: a job whose Postgres or Redis is down keeps retrying
 * (capped exponential backoff, see src/jobs/backoff.ts) for about a day before it fails.
 */
export const scoreJobOptions: JobsOptions = {
  attempts: 3000,
  backoff: { type: 'capped-exponential' },
  // A finished job is needed only by a ?wait=true caller that subscribes late and by the
  // "pending" check of GET /v1/events/{key}, for moments: the ledger answers after that.
  // Kept longer, finished jobs (with their whole batch) filled the noeviction queue Redis
  // (up to 10,000 batches of 1000 events for an hour) and made intake refuse for nothing.
  removeOnComplete: { age: 600, count: 1000 },
  removeOnFail: { age: 14 * 24 * 3600 },
};

export type ScoreEventsQueue = ContractQueue<typeof SCORE_EVENTS_QUEUE, ScoreJobResult>;
/** A queued score job, as its add returns it (for `?wait=true`). */
export type ScoreJobHandle = Job<ScoreJob, ScoreJobResult, 'apply'>;

export function createScoreEventsQueue(connection: RedisClient, redisPrefix: string): ScoreEventsQueue {
  return createContractQueue(SCORE_EVENTS_QUEUE, connection, redisPrefix, scoreJobOptions);
}
