import type { JobsOptions } from 'bullmq';
import type { RedisClient } from '../storage/redis/connections.js';
import { z } from 'zod';
import { scoreEventSchema } from '../domain/event.js';
import { createContractQueue, type ContractQueue } from './enqueue.js';

/**
 * The contract of the "score-events" queue: one job per intake request, never one per event.
 * Optional fields stay optional so jobs queued before a deploy still parse after it.
 */
export const SCORE_EVENTS_QUEUE = 'score-events';

export const scoreJobSchema = z.object({
  events: z
    .array(
      z.object({
        posted: scoreEventSchema,
        receivedAt: z.string(),
        payloadHash: z.string(),
      }),
    )
    .min(1),
  /** Set by `?wait=true`: the worker then returns per-event results with score and rank. */
  wantResults: z.boolean().optional(),
});

export type ScoreJob = z.infer<typeof scoreJobSchema>;

export interface EventResult {
  idempotencyKey: string;
  status: 'applied' | 'duplicate' | 'rejected';
  reason?: string;
  period: string;
  score: number | null;
  rank: number | null;
  /** The member's (all, world) placement before the batch; absent from results of a worker of the previous release. */
  previousScore?: number | null;
  previousRank?: number | null;
}

export interface ScoreJobResult {
  results?: EventResult[];
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

export function createScoreEventsQueue(connection: RedisClient, redisPrefix: string): ScoreEventsQueue {
  return createContractQueue(SCORE_EVENTS_QUEUE, connection, redisPrefix, scoreJobOptions);
}
