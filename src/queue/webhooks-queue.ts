import { createHash } from 'node:crypto';
import type { JobsOptions } from 'bullmq';
import type { RedisClient } from '../storage/redis/connections.js';
import { z } from 'zod';
import { createContractQueue, type ContractQueue } from './enqueue.js';

/** One job per webhook delivery; the job id is the stable delivery id. */
export const WEBHOOKS_QUEUE = 'webhooks';

export const webhookJobSchema = z.object({
  deliveryId: z.string(),
  type: z.enum(['period.closed', 'member.period_report']),
  createdAt: z.string(),
  data: z.record(z.string(), z.unknown()),
});
export type WebhookJob = z.infer<typeof webhookJobSchema>;

/** At least once: retried with capped exponential backoff for about a day. */
export const webhookJobOptions: JobsOptions = {
  attempts: 3000,
  backoff: { type: 'capped-exponential' },
  removeOnComplete: { age: 24 * 3600, count: 100_000 },
  removeOnFail: { age: 14 * 24 * 3600 },
};

export type WebhooksQueue = ContractQueue<typeof WEBHOOKS_QUEUE>;

export function createWebhooksQueue(connection: RedisClient, redisPrefix: string): WebhooksQueue {
  return createContractQueue(WEBHOOKS_QUEUE, connection, redisPrefix, webhookJobOptions);
}

/** Stable across retries and re-enqueues: the receiver deduplicates on it. */
export function deliveryId(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0001')).digest('hex').slice(0, 32);
}
