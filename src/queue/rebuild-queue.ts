import { FlowProducer, type JobsOptions } from 'bullmq';
import type { RedisClient } from '../storage/redis/connections.js';
import { z } from 'zod';
import { createContractQueue, queuePrefix, type ContractQueue } from './enqueue.js';

/**
 * The "rebuild" queue: a `request` job per rebuild asked for (the parent of a BullMQ flow)
 * and a `scope` job per (board, period, category) that refills that category's scopes
 * (world and regions) from Postgres. A `scope` job may also run alone, deduplicated, when
 * a read or a projection finds a category missing from Redis.
 */
export const REBUILD_QUEUE = 'rebuild';

export const scopeJobSchema = z.object({
  board: z.string(),
  period: z.string(),
  category: z.string(),
  fromEvents: z.boolean().optional(),
  /** What asked for it: api, cli, read, projection, startup. */
  trigger: z.string().optional(),
});
export type ScopeJob = z.infer<typeof scopeJobSchema>;

/** Re-projects one member's aggregates after a moderation change (the durable path). */
export const memberJobSchema = z.object({ member: z.string(), openOnly: z.boolean() });

/**
 * Erases a member (docs/api.md, Erasure). The id travels in the job only, never in the erasure record;
 * the job leaves no copy behind in Redis, finished or failed (the record tracks the state).
 */
export const erasureJobSchema = z.object({ erasureId: z.uuid(), member: z.string() });
export type ErasureJob = z.infer<typeof erasureJobSchema>;

export const erasureJobOptions: JobsOptions = {
  attempts: 20,
  backoff: { type: 'capped-exponential' },
  removeOnComplete: true,
  removeOnFail: true,
};

export const requestJobSchema = z.object({
  board: z.string().nullable(),
  period: z.string().nullable(),
  fromEvents: z.boolean(),
  trigger: z.string(),
  requestedAt: z.string(),
});
export type RequestJob = z.infer<typeof requestJobSchema>;

export interface ScopeJobResult {
  board: string;
  period: string;
  category: string;
  members: number;
  durationMs: number;
  recomputed: boolean;
}

export const rebuildJobOptions: JobsOptions = {
  attempts: 20,
  backoff: { type: 'capped-exponential' },
  removeOnComplete: { age: 7 * 24 * 3600, count: 1000 },
  removeOnFail: { age: 14 * 24 * 3600 },
};

export type RebuildQueue = ContractQueue<typeof REBUILD_QUEUE>;

export function createRebuildQueue(connection: RedisClient, redisPrefix: string): RebuildQueue {
  return createContractQueue(REBUILD_QUEUE, connection, redisPrefix, rebuildJobOptions);
}

export function createRebuildFlowProducer(connection: RedisClient, redisPrefix: string): FlowProducer {
  return new FlowProducer({ connection, prefix: queuePrefix(redisPrefix, REBUILD_QUEUE) });
}

/** One deduplication id per category of a period: a thousand reads of a lost scope enqueue one job. */
export function scopeDedupId(job: Pick<ScopeJob, 'board' | 'period' | 'category'>): string {
  return `scope|${job.board}|${job.period}|${job.category}`;
}
